import type { EventPayload, LedgerEvent } from '../../src/domain/events';
import { sameAsDecided } from '../../src/verification/sameAsDecided';

// The fast comparisons for admissions and completions must not answer "same" for an event that
// differs only in a field they leave to the general comparison (meters, keys, deadlines, charges).

const envelope = { seq: 3, at: 10, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) };
const admitted = { type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 2 } } as const;
const logged = (payload: object): LedgerEvent => ({ ...envelope, ...payload }) as unknown as LedgerEvent;
const same = (decided: object, event: object): boolean => sameAsDecided(decided as EventPayload, logged(event));

describe('sameAsDecided', () => {
  it('tells admissions apart by their reserved meters', () => {
    const metered = { ...admitted, reserved: { ...admitted.reserved, meters: { usd: 5 } } };
    expect(same(metered, { ...admitted, reserved: { ...admitted.reserved, meters: { usd: 6 } } })).toBe(false);
    expect(same(metered, metered)).toBe(true);
  });
  it('tells admissions apart by their idempotency digests', () => {
    const keyed = { ...admitted, idempotency: { keyDigest: 'k'.repeat(64), argsDigest: 'a'.repeat(64), expiresAt: 99 } };
    expect(same(keyed, { ...keyed, idempotency: { ...keyed.idempotency, argsDigest: 'b'.repeat(64) } })).toBe(false);
    expect(same(keyed, keyed)).toBe(true);
  });
  it('tells admissions apart by their deadline', () => {
    expect(same({ ...admitted, deadline: 20 }, { ...admitted, deadline: 21 })).toBe(false);
    expect(same({ ...admitted, deadline: 20 }, { ...admitted, deadline: 20 })).toBe(true);
  });
  it('tells a child’s admissions apart by their ancestors', () => {
    expect(same({ ...admitted, ancestors: ['g0'] }, { ...admitted, ancestors: ['g9'] })).toBe(false);
    expect(same({ ...admitted, ancestors: ['g0'] }, { ...admitted, ancestors: ['g0', 'g1'] })).toBe(false);
    expect(same({ ...admitted, ancestors: ['g0'] }, { ...admitted, ancestors: ['g0'] })).toBe(true);
  });
  it('tells completions apart by their charge and overrun flag', () => {
    const completed = { type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' };
    expect(same({ ...completed, charged: { usd: 2 } }, { ...completed, charged: { usd: 3 } })).toBe(false);
    expect(same({ ...completed, charged: { usd: 2 } }, { ...completed, charged: { usd: 2 }, overrun: true })).toBe(false);
    expect(same(completed, { ...completed, charged: { usd: 2 } })).toBe(false);
    expect(same(completed, completed)).toBe(true);
  });
  it('compares a logged event with a toJSON by what it serializes to, not by its fields', () => {
    const event = { ...admitted, toJSON: () => ({ ...envelope, ...admitted, callId: 'other' }) };
    expect(same(admitted, event)).toBe(false);
  });
});

// The fast paths are taken only when both sides lack the fields they do not compare.
describe('sameAsDecided: one side with a field the fast path does not compare', () => {
  it('tells an admission with reserved meters from one without, either way', () => {
    const metered = { ...admitted, reserved: { ...admitted.reserved, meters: { usd: 5 } } };
    expect(same(metered, admitted)).toBe(false);
    expect(same(admitted, metered)).toBe(false);
  });

  it('tells a keyed admission from one without a key, either way', () => {
    const keyed = { ...admitted, idempotency: { keyDigest: 'k'.repeat(64), argsDigest: 'a'.repeat(64), expiresAt: 99 } };
    expect(same(keyed, admitted)).toBe(false);
    expect(same(admitted, keyed)).toBe(false);
  });

  it('tells a charged completion from an uncharged one, and an overrun flag without a charge', () => {
    const completed = { type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' };
    expect(same({ ...completed, charged: { usd: 2 } }, completed)).toBe(false);
    expect(same(completed, { ...completed, overrun: true })).toBe(false);
  });

  it('compares logged ancestors with a toJSON by what they serialize to', () => {
    const ancestors = Object.assign(['g0'], { toJSON: () => ['g9'] });
    expect(same({ ...admitted, ancestors: ['g0'] }, { ...admitted, ancestors })).toBe(false);
  });
});
