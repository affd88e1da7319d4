import type { JsonObject, JsonValue } from '../../src/domain/json';
import { limits } from '../../src/domain/limits';
import { parseNarrowing } from '../../src/domain/narrowing';

// An agent's attenuation request read into a Narrowing: one rule per test, requests built here.
const problem = (request: unknown): string | undefined => {
  const parsed = parseNarrowing(request as JsonObject);
  return parsed.ok ? undefined : parsed.problem;
};
const narrowing = (request: unknown): unknown => {
  const parsed = parseNarrowing(request as JsonObject);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.narrowing;
};

describe('parseNarrowing', () => {
  it('reads an empty request as narrowing nothing', () => {
    expect(narrowing({})).toEqual({});
  });

  it('reads every field it knows', () => {
    const request = {
      tools: ['a'],
      args: { a: { type: 'object' } },
      resources: ['fs:/x/'],
      notBefore: 5,
      expiresAt: 10,
      callTimeoutMs: 100,
      budget: { calls: 1, inputBytes: 2, meters: { usd: 3 }, rate: { calls: 1, windowMs: 10 } },
    };
    expect(narrowing(request)).toEqual(request);
  });

  it('refuses a field attenuate does not know', () => {
    expect(problem({ tools: [], scopes: [] })).toBe('the request has a field attenuate does not know');
  });

  it('refuses tools that are not an array of strings', () => {
    const message = `tools must be an array of at most ${limits.toolsPerGrantMax} tool names`;
    expect(problem({ tools: 'a' })).toBe(message);
    expect(problem({ tools: ['a', 1] })).toBe(message);
  });

  it('accepts toolsPerGrantMax tools and refuses one more', () => {
    const tools = (n: number): string[] => Array.from({ length: n }, (_, i) => `t${i}`);
    expect(problem({ tools: tools(limits.toolsPerGrantMax) })).toBeUndefined();
    expect(problem({ tools: tools(limits.toolsPerGrantMax + 1) })).toBe(`tools must be an array of at most ${limits.toolsPerGrantMax} tool names`);
  });

  it('refuses args that are not an object of schema objects', () => {
    expect(problem({ args: [] })).toBe('args must be an object of narrowing schemas keyed by tool name');
    expect(problem({ args: null })).toBe('args must be an object of narrowing schemas keyed by tool name');
    expect(problem({ args: { a: [] } })).toBe('args must map each tool to a JSON Schema object');
    expect(problem({ args: { a: { type: 'object' }, b: 'x' } })).toBe('args must map each tool to a JSON Schema object');
  });

  it('accepts agent schemas with pattern and patternProperties (RE2 runs them in linear time; compiling is the shell\'s)', () => {
    expect(problem({ args: { a: { properties: { p: { pattern: '^drafts/' } } } } })).toBeUndefined();
    expect(problem({ args: { a: { properties: { p: { patternProperties: { '^x-': {} } } } } } })).toBeUndefined();
  });

  it('refuses resources that are not an array of strings, and more than scopesPerGrantMax', () => {
    const message = `resources must be an array of at most ${limits.scopesPerGrantMax} canonical scopes`;
    expect(problem({ resources: 'fs:/x' })).toBe(message);
    expect(problem({ resources: ['fs:/x', 2] })).toBe(message);
    const scopes = (n: number): string[] => Array.from({ length: n }, (_, i) => `fs:/x${i}`);
    expect(problem({ resources: scopes(limits.scopesPerGrantMax) })).toBeUndefined();
    expect(problem({ resources: scopes(limits.scopesPerGrantMax + 1) })).toBe(message);
  });

  it('refuses a notBefore or expiresAt that is not a finite number, naming the field', () => {
    expect(problem({ notBefore: '5' })).toBe('notBefore must be a finite number of ms since epoch');
    expect(problem({ expiresAt: null })).toBe('expiresAt must be a finite number of ms since epoch');
    expect(problem({ notBefore: 1, expiresAt: Number.POSITIVE_INFINITY })).toBe('expiresAt must be a finite number of ms since epoch');
  });

  it('refuses a callTimeoutMs that is not a positive safe integer', () => {
    for (const callTimeoutMs of [0, -1, 1.5, '5', null]) expect(problem({ callTimeoutMs })).toBe('callTimeoutMs must be a positive safe integer (ms)');
    expect(problem({ callTimeoutMs: 1 })).toBeUndefined();
  });

  it('refuses a budget that is not an object or holds an unknown field', () => {
    expect(problem({ budget: [] })).toBe('budget must be an object');
    expect(problem({ budget: 5 })).toBe('budget must be an object');
    expect(problem({ budget: { calls: 1, usd: 1 } })).toBe('budget has a field attenuate does not know');
  });

  it('refuses budget amounts that are not non-negative safe integers, naming the amount', () => {
    expect(problem({ budget: { calls: -1 } })).toBe('budget.calls must be a non-negative safe integer');
    expect(problem({ budget: { inputBytes: 1.5 } })).toBe('budget.inputBytes must be a non-negative safe integer');
    expect(narrowing({ budget: { calls: 0, inputBytes: 0 } })).toEqual({ budget: { calls: 0, inputBytes: 0 } });
  });

  it('passes on the meters and rate problems', () => {
    expect(problem({ budget: { meters: { USD: 1 } } })).toMatch(/^budget\.meters: meter names must match/);
    expect(problem({ budget: { rate: { calls: 0, windowMs: 1 } } })).toBe(`budget.rate.calls must be an integer from 1 to ${limits.rateCallsMax}`);
  });

});
