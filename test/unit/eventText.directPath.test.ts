import * as canonical from '../../src/domain/canonicalJson';
import { eventTextWithoutHash } from '../../src/domain/eventText';

// eventTextWithoutHash writes the two events of every call directly (≈ 0.2 µs against 0.6–1 µs for
// the general writer; sealing and verify hash every event). test/property/eventText.test.ts pins
// that the text is always the general one; this pins that the common shapes really take the direct
// path, and that near-misses do not.

const envelope = { seq: 7, at: 1_000, prevHash: 'p'.repeat(64), hash: 'h'.repeat(64) };
const admitted = { ...envelope, type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 2 } };
const completed = { ...envelope, type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' };
const key = { argsDigest: 'a'.repeat(64), expiresAt: 5_000, keyDigest: 'k'.repeat(64) };

const direct: [string, object][] = [
  ['a plain admission', admitted],
  ['a child’s admission (ancestors)', { ...admitted, ancestors: ['g0', 'g1'] }],
  ['a timed admission (deadline)', { ...admitted, deadline: 1_010 }],
  ['a keyed admission (idempotency)', { ...admitted, idempotency: key }],
  ['a child’s timed, keyed admission', { ...admitted, ancestors: ['g0'], deadline: 1_010, idempotency: key }],
  ['a metered admission (reserved meters)', { ...admitted, reserved: { calls: 1, inputBytes: 2, meters: { usd: 5, tokens: 9 } } }],
  ['a child’s metered admission', { ...admitted, ancestors: ['g0'], reserved: { calls: 1, inputBytes: 2, meters: { usd: 5 } } }],
  ['a plain completion', completed],
  ['a metered completion (charged)', { ...completed, charged: { usd: 2 } }],
  ['a metered completion with an overrun', { ...completed, charged: { usd: 5 }, overrun: true }],
  ['an event without a hash field yet (sealing)', (({ hash: _h, ...rest }) => rest)(admitted)],
];
const general: [string, object][] = [
  ['an admission with an extra field', { ...admitted, extra: 1 }],
  ['an admission whose reserved has an extra field', { ...admitted, reserved: { calls: 1, inputBytes: 2, extra: 3 } }],
  ['a completion with an overrun that is not true', { ...completed, charged: { usd: 2 }, overrun: false }],
  ['a completion with an overrun and no charge', { ...completed, overrun: true, other: 1 }],
  ['an admission with non-string ancestors', { ...admitted, ancestors: [1] }],
  ['an admission with a non-number deadline', { ...admitted, deadline: 'soon' }],
  ['a keyed admission with a fourth key field', { ...admitted, idempotency: { ...key, extra: 1 } }],
  ['meters holding a fraction', { ...admitted, reserved: { calls: 1, inputBytes: 2, meters: { usd: 0.5 } } }],
  ['seventeen meters', { ...admitted, reserved: { calls: 1, inputBytes: 2, meters: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`m${i}`, 1])) } }],
  ['a grant issue', { ...envelope, type: 'grant.issued', grantId: 'g1' }],
];

describe('eventTextWithoutHash', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each(direct)('writes %s directly, byte for byte the general text', (_label, event) => {
    const expected = canonical.canonicalJsonWithout(event, 'hash');
    const spy = jest.spyOn(canonical, 'canonicalJsonWithout');
    expect(eventTextWithoutHash(event)).toBe(expected);
    expect(spy).not.toHaveBeenCalled();
  });

  it.each(general)('leaves %s to the general writer', (_label, event) => {
    const expected = canonical.canonicalJsonWithout(event, 'hash');
    const spy = jest.spyOn(canonical, 'canonicalJsonWithout');
    expect(eventTextWithoutHash(event)).toBe(expected);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
