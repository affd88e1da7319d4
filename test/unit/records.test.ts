import type { EventOf, GrantScope } from '../../src/domain/events';
import { grantRecord, inFlightCall, meterRelease, refunds, toolRecord, withCallUsage, withDescendant, withUsage } from '../../src/domain/records';
import type { GrantRecord } from '../../src/domain/state';

// The records events create or change (records.ts), built the same by `evolve` and the batch fold.
// Absent fields must stay absent, not `undefined`: a snapshot's JSON and `replay` then agree.

const envelope = { seq: 1, at: 1_000, prevHash: '0'.repeat(64), hash: '1'.repeat(64) };
const scope = (budget: Partial<GrantScope['budget']> = {}): GrantScope => ({
  tools: ['t'],
  args: { t: { type: 'object', properties: { n: { type: 'number' } } } },
  resources: [],
  notBefore: 0,
  expiresAt: 10_000,
  budget: { calls: 5, inputBytes: 100, ...budget },
});
function issued(grantId: string, s: GrantScope, parentGrantId?: string): EventOf<'grant.issued'> {
  return { ...envelope, type: 'grant.issued', grantId, tokenDigest: 'd'.repeat(64), scope: s, ...(parentGrantId === undefined ? {} : { parentGrantId }) } as EventOf<'grant.issued'>;
}
function admitted(fields: Partial<EventOf<'call.admitted'>>): EventOf<'call.admitted'> {
  return { ...envelope, type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 3 }, ...fields } as EventOf<'call.admitted'>;
}
const keys = (o: object): string[] => Object.keys(o).sort();
const base = ['grantId', 'issuedAt', 'revoked', 'scope', 'tokenDigest', 'used'];
const metered = { meters: { usd: 50 } };

describe('toolRecord and grantRecord freeze what they keep', () => {
  it('deep-freezes a tool’s input schema', () => {
    const record = toolRecord({ ...envelope, type: 'tool.registered', tool: 't', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } } as EventOf<'tool.registered'>);
    expect(Object.isFrozen((record.inputSchema as { properties: { a: object } }).properties.a)).toBe(true);
  });
  it('deep-freezes a grant’s scope', () => {
    const record = grantRecord(issued('g1', scope()), undefined);
    expect(Object.isFrozen(record.scope.budget)).toBe(true);
    expect(Object.isFrozen(record.scope.args.t)).toBe(true);
  });
});

describe('grantRecord fields', () => {
  it('gives a root grant exactly the base fields', () => {
    expect(keys(grantRecord(issued('g1', scope()), undefined))).toEqual(base);
  });
  it('gives a metered root its meters at zero and no chain or rate fields', () => {
    const record = grantRecord(issued('g1', scope(metered)), undefined);
    expect(keys(record)).toEqual([...base, 'metersUsed'].sort());
    expect(record.metersUsed).toEqual({ usd: 0 });
  });
  it('gives a rate-limited root an empty window and no meters field', () => {
    const record = grantRecord(issued('g1', scope({ rate: { calls: 2, windowMs: 1_000 } })), undefined);
    expect(keys(record)).toEqual([...base, 'admissions'].sort());
  });
  it('gives a metered child its parent and its ancestors, root first', () => {
    const root = grantRecord(issued('g1', scope(metered)), undefined);
    const child = grantRecord(issued('g2', scope(metered), 'g1'), root);
    const grandchild = grantRecord(issued('g3', scope(metered), 'g2'), child);
    expect(keys(grandchild)).toEqual([...base, 'ancestors', 'metersUsed', 'parentGrantId'].sort());
    expect(grandchild.parentGrantId).toBe('g2');
    expect(grandchild.ancestors).toEqual(['g1', 'g2']);
  });
  it('names only the parent id when the parent’s record is not known', () => {
    expect(grantRecord(issued('g2', scope(), 'g1'), undefined).ancestors).toEqual(['g1']);
  });
});

describe('withDescendant', () => {
  it('counts grants issued below a root and keeps it free of chain fields', () => {
    const once = withDescendant(grantRecord(issued('g1', scope()), undefined));
    expect(keys(once)).toEqual([...base, 'descendants'].sort());
    expect(withDescendant(once).descendants).toBe(2);
  });
  it('keeps a metered root’s meters and adds only the count', () => {
    const record = withDescendant(grantRecord(issued('g1', scope(metered)), undefined));
    expect(keys(record)).toEqual([...base, 'descendants', 'metersUsed'].sort());
  });
});

describe('withCallUsage on a grant with meters', () => {
  const root = (): GrantRecord => grantRecord(issued('g1', scope(metered)), undefined);
  it('adds calls and input bytes', () => {
    expect(withCallUsage(root(), 1, 7, { usd: 5 }, 1, undefined).used).toEqual({ calls: 1, inputBytes: 7 });
  });
  it('adds a call that carries no input bytes', () => {
    expect(withCallUsage(root(), 1, 0, undefined, 1, undefined).used).toEqual({ calls: 1, inputBytes: 0 });
  });
  it('adds input bytes without a call', () => {
    expect(withCallUsage(root(), 0, 4, undefined, 1, undefined).used).toEqual({ calls: 0, inputBytes: 4 });
  });
  it('keeps the usage object itself when only meters change (a settlement’s release)', () => {
    const grant = withCallUsage(root(), 1, 7, { usd: 5 }, 1, undefined);
    const released = withCallUsage(grant, 0, 0, { usd: 2 }, -1, undefined);
    expect(released.used).toBe(grant.used);
    expect(released.metersUsed).toEqual({ usd: 3 });
  });
  it('matches withUsage on a plain grant', () => {
    const plain = grantRecord(issued('g1', scope()), undefined);
    expect(withCallUsage(plain, 1, 2, undefined, 1, undefined)).toStrictEqual(withUsage(plain, 1, 2));
  });
});

describe('inFlightCall', () => {
  it('freezes the meters a call reserved', () => {
    const call = inFlightCall(admitted({ reserved: { calls: 1, inputBytes: 3, meters: { usd: 5 } } }));
    expect(Object.isFrozen(call.reserved.meters)).toBe(true);
  });
  it('keeps a deadline and no key field for a timed call', () => {
    expect(keys(inFlightCall(admitted({ deadline: 2_000 })))).toEqual(['admittedAt', 'callId', 'deadline', 'grantId', 'reserved', 'seq', 'tool']);
  });
  it('keeps the key digest and no deadline field for a keyed call', () => {
    const call = inFlightCall(admitted({ idempotency: { keyDigest: 'k'.repeat(64), argsDigest: 'a'.repeat(64), expiresAt: 2_000 } }));
    expect(keys(call)).toEqual(['admittedAt', 'callId', 'grantId', 'key', 'reserved', 'seq', 'tool']);
  });
});

describe('meterRelease', () => {
  const call = inFlightCall(admitted({ reserved: { calls: 1, inputBytes: 3, meters: { usd: 5, tokens: 9 } } }));
  it('gives back reserved minus charged, per meter', () => {
    expect(meterRelease(call, { usd: 2, tokens: 9 })).toEqual({ usd: 3 });
  });
  it('gives back nothing when every reserved amount was charged', () => {
    expect(meterRelease(call, { usd: 5, tokens: 9 })).toBeUndefined();
  });
});

describe('refunds', () => {
  const failed = (calls: number, inputBytes: number) => ({ ...envelope, type: 'call.failed', callId: 'c1', grantId: 'g1', refunded: { calls, inputBytes } }) as unknown as EventOf<'call.failed'>;
  it('is true when calls or input bytes come back, and false when nothing does', () => {
    expect(refunds(failed(1, 0))).toBe(true);
    expect(refunds(failed(0, 3))).toBe(true);
    expect(refunds(failed(0, 0))).toBe(false);
  });
});
