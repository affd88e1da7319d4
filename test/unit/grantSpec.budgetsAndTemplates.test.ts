import type { GrantScope } from '../../src/domain/events';
import { rateProblem, resourceTemplatesProblem } from '../../src/domain/grantSpec';
import { limits } from '../../src/domain/limits';
import { given, issueCommand, registerNotes } from '../support/given';

// The grant-spec refusals of the second wave: rate windows, callTimeoutMs, meters in the budget,
// resource templates and fsBase. One rule per test, each at its edge; the message names the field.

const scope = (): GrantScope => (issueCommand() as { scope: GrantScope }).scope;
const issueRefusal = (over: object): unknown => {
  const decision = given(registerNotes).when({ ...issueCommand(), ...over } as never);
  return decision.ok ? undefined : decision.message;
};

describe('rateProblem', () => {
  it('refuses a rate that is not an object', () => {
    for (const rate of [null, 5, 'x', [1, 2]]) expect(rateProblem(rate)).toBe('budget.rate must be { calls, windowMs }');
  });
  it('refuses a rate with another field', () => {
    expect(rateProblem({ calls: 1, windowMs: 1, burst: 2 })).toBe('budget.rate may hold only calls and windowMs');
  });
  it('takes calls from 1 to rateCallsMax', () => {
    const message = `budget.rate.calls must be an integer from 1 to ${limits.rateCallsMax}`;
    expect(rateProblem({ calls: 0, windowMs: 1 })).toBe(message);
    expect(rateProblem({ calls: limits.rateCallsMax + 1, windowMs: 1 })).toBe(message);
    expect(rateProblem({ calls: 1.5, windowMs: 1 })).toBe(message);
    expect(rateProblem({ calls: limits.rateCallsMax, windowMs: 1 })).toBeUndefined();
    expect(rateProblem({ calls: 1, windowMs: 1 })).toBeUndefined();
  });
  it('takes a positive safe integer window', () => {
    const message = 'budget.rate.windowMs must be a positive safe integer';
    expect(rateProblem({ calls: 1, windowMs: 0 })).toBe(message);
    expect(rateProblem({ calls: 1, windowMs: 2.5 })).toBe(message);
    expect(rateProblem({ calls: 1 })).toBe(message);
  });
});

describe('issue refuses a budget', () => {
  it('with a field besides calls, inputBytes, meters and rate', () => {
    expect(issueRefusal({ scope: { ...scope(), budget: { calls: 1, inputBytes: 1, usd: 5 } } })).toBe('budget may hold only calls, inputBytes, meters and rate');
  });
  it('with a bad rate window, naming it', () => {
    expect(issueRefusal({ scope: { ...scope(), budget: { calls: 1, inputBytes: 1, rate: { calls: 0, windowMs: 1 } } } })).toMatch(/^budget\.rate\.calls/);
  });
  it('with bad meters, naming them', () => {
    expect(issueRefusal({ scope: { ...scope(), budget: { calls: 1, inputBytes: 1, meters: { usd: -1 } } } })).toMatch(/^budget\.meters/);
  });
  it('with a callTimeoutMs that is not a positive safe integer', () => {
    for (const callTimeoutMs of [0, 1.5, -1]) expect(issueRefusal({ scope: { ...scope(), callTimeoutMs } })).toBe('callTimeoutMs must be a positive safe integer (ms)');
  });
  it('with good meters and a bad rate, naming the rate', () => {
    expect(issueRefusal({ scope: { ...scope(), budget: { calls: 1, inputBytes: 1, meters: { usd: 5 }, rate: { calls: 0, windowMs: 100 } } } })).toBe(`budget.rate.calls must be an integer from 1 to ${limits.rateCallsMax}`);
  });
  it('and accepts meters and a rate together', () => {
    expect(issueRefusal({ scope: { ...scope(), budget: { calls: 1, inputBytes: 1, meters: { usd: 5 }, rate: { calls: 2, windowMs: 100 } } } })).toBeUndefined();
  });
});

describe('resourceTemplatesProblem', () => {
  const s = { ...scope(), tools: ['notes.write'] };
  it('takes an absolute fsBase of at most 4,096 characters', () => {
    const message = 'fsBase must be an absolute directory path of at most 4,096 characters';
    expect(resourceTemplatesProblem(s, undefined, 'relative')).toBe(message);
    expect(resourceTemplatesProblem(s, undefined, 5 as never)).toBe(message);
    expect(resourceTemplatesProblem(s, undefined, `/${'a'.repeat(4_096)}`)).toBe(message);
    expect(resourceTemplatesProblem(s, undefined, `/${'a'.repeat(4_095)}`)).toBeUndefined();
  });
  it('refuses templates that are not an object of lists', () => {
    const message = 'resourceTemplates must be an object of template lists keyed by tool name';
    for (const t of [null, [], 'x']) expect(resourceTemplatesProblem(s, t as never, undefined)).toBe(message);
  });
  it('refuses templates for a tool the grant does not include', () => {
    expect(resourceTemplatesProblem(s, { 'notes.read': ['notes:/{path}'] }, undefined)).toBe('resourceTemplates names tool "notes.read", which the grant does not include');
  });
  it('cuts a tool name the templates name but the grant lacks to 80 characters in the message', () => {
    const long = 'z'.repeat(200);
    expect(resourceTemplatesProblem(s, { [long]: ['notes:/{path}'] }, undefined)).toBe(`resourceTemplates names tool ${JSON.stringify(long).slice(0, 80)}, which the grant does not include`);
  });
  it('takes at most resourcesPerCallMax templates per tool, in an array', () => {
    const message = `resourceTemplates["notes.write"] must be an array of at most ${limits.resourcesPerCallMax} templates`;
    expect(resourceTemplatesProblem(s, { 'notes.write': 'notes:/{path}' as never }, undefined)).toBe(message);
    expect(resourceTemplatesProblem(s, { 'notes.write': Array(limits.resourcesPerCallMax + 1).fill('a') }, undefined)).toBe(message);
    expect(resourceTemplatesProblem(s, { 'notes.write': Array(limits.resourcesPerCallMax).fill('a') }, undefined)).toBeUndefined();
  });
  it('takes non-empty template strings of at most resourceBytesMax characters', () => {
    const message = `resourceTemplates["notes.write"] must hold non-empty strings of at most ${limits.resourceBytesMax} characters`;
    for (const t of ['', 5, 'a'.repeat(limits.resourceBytesMax + 1)]) expect(resourceTemplatesProblem(s, { 'notes.write': [t as string] }, undefined)).toBe(message);
    expect(resourceTemplatesProblem(s, { 'notes.write': ['a'.repeat(limits.resourceBytesMax)] }, undefined)).toBeUndefined();
  });
  it('checks every tool’s list, not only the first', () => {
    const two = { ...scope(), tools: ['notes.write', 'notes.read'] };
    expect(resourceTemplatesProblem(two, { 'notes.write': ['a'], 'notes.read': [''] }, undefined)).toMatch(/^resourceTemplates\["notes.read"\]/);
  });
});
