import type { Command } from '../../src/domain/commands';
import { decide } from '../../src/domain/decide';
import type { GrantScope } from '../../src/domain/events';
import { limits } from '../../src/domain/limits';
import { given, issueCommand, registerNotes, registerRead, T0 } from '../support/given';

// Every refusal of a grant scope, one rule per row: decide refuses it `invalid_grant` with a message
// that names the field (never throws). The state is built inside each test.

type Scope = Record<keyof GrantScope, unknown>;

function issueWith(overrides: Partial<Scope>): Command {
  const base = issueCommand() as Extract<Command, { type: 'issue' }>;
  return { ...base, scope: { ...base.scope, ...overrides } as GrantScope };
}

function refusal(overrides: Partial<Scope>): { code: string; message: string } | 'issued' {
  const decision = given(registerNotes, registerRead).when(issueWith(overrides));
  return decision.ok ? 'issued' : { code: decision.code, message: decision.message };
}

const refused = (message: string): { code: string; message: string } => ({ code: 'invalid_grant', message });

describe('grant scope: tools', () => {
  it.each<[string, unknown, string]>([
    ['tools missing', undefined, 'tools must be a non-empty array of tool names'],
    ['tools not an array', 'notes.write', 'tools must be a non-empty array of tool names'],
    ['tools empty', [], 'tools must be a non-empty array of tool names'],
    ['a tool that is not a string', [42], 'tool "42" is not registered'],
    ['an unregistered tool', ['notes.nope'], 'tool "notes.nope" is not registered'],
    ['a non-string whose text is a registered tool name', [{ toString: () => 'notes.write' }], 'tool "notes.write" is not registered'],
    ['an inherited property name as tool', ['toString'], 'tool "toString" is not registered'],
    ['a tool listed twice', ['notes.write', 'notes.read', 'notes.write'], 'tool "notes.write" is listed twice'],
  ])('refuses %s', (_rule, tools, message) => {
    expect(refusal({ tools })).toEqual(refused(message));
  });

  it('cuts an unregistered tool name to 80 characters in the message', () => {
    const result = refusal({ tools: ['x'.repeat(200)] });
    expect(result).toEqual(refused(`tool ${`"${'x'.repeat(200)}"`.slice(0, 80)} is not registered`));
  });

  it('cuts a tool name that args names but the grant lacks to 80 characters in the message', () => {
    const long = 'y'.repeat(200);
    expect(refusal({ args: { [long]: {} } })).toEqual(refused(`args names tool ${JSON.stringify(long).slice(0, 80)}, which the grant does not include`));
  });

  it('accepts two different registered tools', () => {
    expect(refusal({ tools: ['notes.write', 'notes.read'] })).toBe('issued');
  });
});

describe('grant scope: narrowing args', () => {
  it.each<[string, unknown, string]>([
    ['args null', null, 'args must be an object of narrowing schemas keyed by tool name'],
    ['args an array', [], 'args must be an object of narrowing schemas keyed by tool name'],
    ['args a string', 'x', 'args must be an object of narrowing schemas keyed by tool name'],
    ['args naming a tool the grant lacks', { 'notes.read': {} }, 'args names tool "notes.read", which the grant does not include'],
    ['a narrowing schema that is null', { 'notes.write': null }, 'args["notes.write"] must be a JSON Schema object'],
    ['a narrowing schema that is an array', { 'notes.write': [] }, 'args["notes.write"] must be a JSON Schema object'],
    ['a narrowing schema that is a number', { 'notes.write': 1 }, 'args["notes.write"] must be a JSON Schema object'],
  ])('refuses %s', (_rule, args, message) => {
    expect(refusal({ args })).toEqual(refused(message));
  });

  it('accepts a narrowing schema object for a granted tool', () => {
    expect(refusal({ args: { 'notes.write': { properties: { path: { const: 'drafts/a' } } } } })).toBe('issued');
  });
});

describe('grant scope: resources', () => {
  it.each<[string, unknown, string]>([
    ['resources missing', undefined, 'resources must be an array of canonical scopes'],
    ['resources a string', 'notes:/drafts/', 'resources must be an array of canonical scopes'],
    ['resources an object', { 0: 'notes:/drafts/' }, 'resources must be an array of canonical scopes'],
  ])('refuses %s', (_rule, resources, message) => {
    expect(refusal({ resources })).toEqual(refused(message));
  });

  it('refuses a non-canonical scope and names its index', () => {
    const result = refusal({ resources: ['notes:/a/', 'notes:/a/../b'] });
    expect(result).toMatchObject({ code: 'invalid_grant', message: expect.stringMatching(/^resources\[1\] is not a canonical scope/) });
  });

  it('accepts no resources at all (a grant for tools that name none)', () => {
    expect(refusal({ resources: [] })).toBe('issued');
  });
});

describe('grant scope: validity window', () => {
  it.each<[string, Partial<Scope>, string]>([
    ['notBefore missing', { notBefore: undefined }, 'notBefore must be a finite number of ms since epoch'],
    ['notBefore NaN', { notBefore: Number.NaN }, 'notBefore must be a finite number of ms since epoch'],
    ['notBefore a string', { notBefore: String(T0) }, 'notBefore must be a finite number of ms since epoch'],
    ['expiresAt missing', { expiresAt: undefined }, 'expiresAt is required and must be a finite number of ms since epoch'],
    ['expiresAt NaN', { expiresAt: Number.NaN }, 'expiresAt is required and must be a finite number of ms since epoch'],
    ['expiresAt Infinity', { expiresAt: Number.POSITIVE_INFINITY }, 'expiresAt is required and must be a finite number of ms since epoch'],
    ['expiresAt equal to notBefore', { notBefore: T0, expiresAt: T0 }, 'expiresAt must be after notBefore'],
    ['expiresAt before notBefore', { notBefore: T0, expiresAt: T0 - 1 }, 'expiresAt must be after notBefore'],
  ])('refuses %s', (_rule, overrides, message) => {
    expect(refusal(overrides)).toEqual(refused(message));
  });

  it('accepts a window of one millisecond', () => {
    expect(refusal({ notBefore: T0, expiresAt: T0 + 1 })).toBe('issued');
  });
});

describe('grant scope: budget', () => {
  it.each<[string, unknown, string]>([
    ['budget null', null, 'budget must be { calls, inputBytes }'],
    ['budget missing', undefined, 'budget must be { calls, inputBytes }'],
    ['budget a number', 5, 'budget must be { calls, inputBytes }'],
    ['budget.calls missing', { inputBytes: 10 }, 'budget.calls must be a non-negative safe integer'],
    ['budget.calls negative', { calls: -1, inputBytes: 10 }, 'budget.calls must be a non-negative safe integer'],
    ['budget.calls fractional', { calls: 1.5, inputBytes: 10 }, 'budget.calls must be a non-negative safe integer'],
    ['budget.calls beyond safe integers', { calls: 2 ** 53, inputBytes: 10 }, 'budget.calls must be a non-negative safe integer'],
    ['budget.calls a string', { calls: '1', inputBytes: 10 }, 'budget.calls must be a non-negative safe integer'],
    ['budget.inputBytes missing', { calls: 1 }, 'budget.inputBytes must be a non-negative safe integer'],
    ['budget.inputBytes negative', { calls: 1, inputBytes: -1 }, 'budget.inputBytes must be a non-negative safe integer'],
    ['budget.inputBytes NaN', { calls: 1, inputBytes: Number.NaN }, 'budget.inputBytes must be a non-negative safe integer'],
  ])('refuses %s', (_rule, budget, message) => {
    expect(refusal({ budget })).toEqual(refused(message));
  });

  it('accepts a zero budget and the largest safe integer', () => {
    expect(refusal({ budget: { calls: 0, inputBytes: 0 } })).toBe('issued');
    expect(refusal({ budget: { calls: Number.MAX_SAFE_INTEGER, inputBytes: Number.MAX_SAFE_INTEGER } })).toBe('issued');
  });
});

describe('grant scope: the scope itself', () => {
  it.each<[string, unknown]>([
    ['a null scope', null],
    ['a scope that is a string', 'tools'],
    ['a scope that is an array', []],
  ])('refuses %s instead of throwing', (_rule, scope) => {
    const command = { ...(issueCommand() as Extract<Command, { type: 'issue' }>), scope: scope as GrantScope };
    const decision = decide(given(registerNotes).state, command);
    expect(decision).toEqual({ ok: false, code: 'invalid_grant', message: 'scope must be an object' });
  });
});

describe('grant scope: count limits at their edge', () => {
  it(`refuses ${limits.toolsPerGrantMax + 1} tools by count, before looking them up`, () => {
    const tools = Array.from({ length: limits.toolsPerGrantMax + 1 }, (_, i) => `t${i}`);
    expect(refusal({ tools })).toEqual(refused(`tools may hold at most ${limits.toolsPerGrantMax} names`));
  });

  it(`accepts exactly ${limits.toolsPerGrantMax} registered tools`, () => {
    const registers: Command[] = Array.from({ length: limits.toolsPerGrantMax }, (_, i) => ({ type: 'registerTool', at: T0, tool: `t${i}`, inputSchema: { type: 'object' } }));
    const tools = registers.map((c) => (c as Extract<Command, { type: 'registerTool' }>).tool);
    expect(given(...registers).when(issueWith({ tools })).ok).toBe(true);
  });

  it(`refuses ${limits.scopesPerGrantMax + 1} resource scopes by count`, () => {
    const resources = Array.from({ length: limits.scopesPerGrantMax + 1 }, (_, i) => `notes:/r${i}/`);
    expect(refusal({ resources })).toEqual(refused(`resources may hold at most ${limits.scopesPerGrantMax} scopes`));
  });

  it(`accepts exactly ${limits.scopesPerGrantMax} resource scopes`, () => {
    const resources = Array.from({ length: limits.scopesPerGrantMax }, (_, i) => `notes:/r${i}/`);
    expect(refusal({ resources })).toBe('issued');
  });
});
