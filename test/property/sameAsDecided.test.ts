import fc from 'fast-check';
import { canonicalJson, canonicalJsonOmitting } from '../../src/domain/canonicalJson';
import type { EventPayload, LedgerEvent } from '../../src/domain/events';
import { eventShapeProblem } from '../../src/verification/eventShape';
import { sameAsDecided } from '../../src/verification/sameAsDecided';

// verify's per-event comparison: it must answer exactly what comparing canonical texts answers,
// for every event the shape check accepts (those are the only ones it sees).
const envelope = ['seq', 'at', 'prevHash', 'hash'];
const textEqual = (payload: EventPayload, event: LedgerEvent): boolean => canonicalJson(payload) === canonicalJsonOmitting(event, envelope);

const id = fc.constantFrom('c_1', 'c_2', 'g_1', 'g_2', 'fs.read', 'x', '');
const count = fc.constantFrom(0, 1, 2, 50, 2 ** 40);
const hex = fc.constantFrom('0'.repeat(64), 'a'.repeat(64));
const envelopeArb = fc.record({ seq: fc.integer({ min: 1, max: 9 }), at: fc.constantFrom(0, 1.5, 1_700_000_000_000), prevHash: hex, hash: hex });

const ancestors = fc.array(id, { minLength: 1, maxLength: 3 });
const payload: fc.Arbitrary<EventPayload> = fc.oneof(
  fc.record({ type: fc.constant('call.admitted' as const), callId: id, grantId: id, tool: id, reserved: fc.record({ calls: count, inputBytes: count }) }),
  // A child's call: its ancestors named in the event (delegation).
  fc.record({ type: fc.constant('call.admitted' as const), callId: id, grantId: id, tool: id, reserved: fc.record({ calls: count, inputBytes: count }), ancestors }),
  fc.record({ type: fc.constant('attenuation.rejected' as const), reason: fc.constantFrom('revoked' as const, 'attenuation_widens' as const), parentGrantId: id }, { requiredKeys: ['type', 'reason'] }),
  fc.record({ type: fc.constant('revocation.rejected' as const), reason: fc.constantFrom('expired' as const, 'not_a_descendant' as const), revokedBy: id, grantId: id }, { requiredKeys: ['type', 'reason'] }),
  fc.record({ type: fc.constant('call.completed' as const), callId: id, grantId: id, tool: id }),
  fc.record({ type: fc.constant('call.failed' as const), callId: id, grantId: id, tool: id, refunded: fc.record({ calls: count, inputBytes: count }) }),
  fc.record(
    { type: fc.constant('call.rejected' as const), callId: id, grantId: id, tool: id, reason: fc.constantFrom('revoked' as const, 'expired' as const), inputBytes: count },
    { requiredKeys: ['type', 'callId', 'tool', 'reason'] },
  ),
);

// An event near `p`: the same payload, or one with some fields taken from another payload.
const eventNear = (p: EventPayload): fc.Arbitrary<LedgerEvent> =>
  fc.tuple(payload, fc.subarray(['type', 'callId', 'grantId', 'tool', 'reserved', 'refunded', 'reason', 'inputBytes', 'ancestors', 'parentGrantId', 'revokedBy']), envelopeArb).map(([other, taken, env]) => {
    const event: Record<string, unknown> = { ...p, ...env };
    for (const key of taken) {
      const value = (other as unknown as Record<string, unknown>)[key];
      if (value === undefined) delete event[key];
      else event[key] = value;
    }
    return event as unknown as LedgerEvent;
  });

describe('sameAsDecided', () => {
  it('agrees with comparing canonical texts for every well-formed event', () => {
    const pairs = payload.chain((p) => fc.tuple(fc.constant(p), eventNear(p))).filter(([, e]) => eventShapeProblem(e) === undefined);
    fc.assert(fc.property(pairs, ([p, e]) => sameAsDecided(p, e) === textEqual(p, e)), { numRuns: 5_000 });
  });

  it('accepts the payload it was decided from, with the envelope added', () => {
    const admitted: EventPayload = { type: 'call.admitted', callId: 'c_1', grantId: 'g_1', tool: 'fs.read', reserved: { calls: 1, inputBytes: 50 } };
    const event = { ...admitted, seq: 3, at: 1, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) } as LedgerEvent;
    expect(sameAsDecided(admitted, event)).toBe(true);
  });

  it("tells a child's admission from one that names other ancestors, or none", () => {
    const admitted: EventPayload = { type: 'call.admitted', callId: 'c_1', grantId: 'g_2', tool: 'fs.read', reserved: { calls: 1, inputBytes: 5 }, ancestors: ['g_0', 'g_1'] };
    const env = { seq: 3, at: 1, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) };
    expect(sameAsDecided(admitted, { ...admitted, ...env, ancestors: ['g_0', 'g_1'] } as LedgerEvent)).toBe(true);
    expect(sameAsDecided(admitted, { ...admitted, ...env, ancestors: ['g_1'] } as LedgerEvent)).toBe(false);
    const { ancestors: _dropped, ...flat } = admitted as Extract<EventPayload, { type: 'call.admitted' }>;
    expect(sameAsDecided(admitted, { ...flat, ...env } as LedgerEvent)).toBe(false);
    expect(sameAsDecided(flat, { ...admitted, ...env } as LedgerEvent)).toBe(false);
  });

  it('tells an admission from a completion with the same fields', () => {
    const fields = { callId: 'c_1', grantId: 'g_1', tool: 'fs.read' };
    const event = { type: 'call.completed', ...fields, seq: 3, at: 1, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) } as LedgerEvent;
    expect(sameAsDecided({ type: 'call.admitted', ...fields, reserved: { calls: 1, inputBytes: 0 } }, event)).toBe(false);
  });

  it('compares what toJSON gives, as the canonical text does', () => {
    const p: EventPayload = { type: 'call.admitted', callId: 'c_1', grantId: 'g_1', tool: 'fs.read', reserved: { calls: 1, inputBytes: 5 } };
    const reserved = Object.assign(Object.create({ toJSON: () => ({ calls: 1, inputBytes: 6 }) }) as object, { calls: 1, inputBytes: 5 });
    const event = { ...p, reserved, seq: 1, at: 0, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) } as unknown as LedgerEvent;
    expect(sameAsDecided(p, event)).toBe(textEqual(p, event));
    expect(sameAsDecided(p, event)).toBe(false);
  });
});
