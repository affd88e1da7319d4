import type { EventPayload, LedgerEvent } from '../src/domain/events';
import { sameAsDecided } from '../src/verification/sameAsDecided';

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
