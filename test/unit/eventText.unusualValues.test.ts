import { canonicalJsonWithout } from '../../src/domain/canonicalJson';
import { eventTextWithoutHash } from '../../src/domain/eventText';

// A hand-built or forged event whose fields look right but hold values the direct writer must not
// print itself (a toJSON method, a non-finite number, a string for a number, an extra member): the
// text is still exactly the general one, or the same error.

const envelope = { seq: 7, at: 1_000, prevHash: 'p'.repeat(64), hash: 'h'.repeat(64) };
const admitted = { ...envelope, type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 2 } };
const completed = { ...envelope, type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' };
const key = { argsDigest: 'a'.repeat(64), expiresAt: 5_000, keyDigest: 'k'.repeat(64) };
/** `fields` as own members of an object whose prototype has a toJSON method. */
const withInheritedToJSON = <T extends object>(fields: T): T => Object.assign(Object.create({ toJSON: () => 'replaced' }) as object, fields) as T;
const ancestorsWithToJSON = Object.assign(['g0'], { toJSON: () => 'replaced' });

const outcome = (write: () => string): string => {
  try {
    return write();
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
};

describe('eventTextWithoutHash on look-alike events', () => {
  it.each<[string, object]>([
    ['a completion at a time that is NaN', { ...completed, at: Number.NaN }],
    ['an admission whose reservation inherits a toJSON method', { ...admitted, reserved: withInheritedToJSON({ calls: 1, inputBytes: 2 }) }],
    ['an admission reserving calls given as a string', { ...admitted, reserved: { calls: '1', inputBytes: 2 } }],
    ['an admission reserving input bytes given as a string', { ...admitted, reserved: { calls: 1, inputBytes: '2' } }],
    ['a metered reservation with a fourth member', { ...admitted, reserved: { calls: 1, inputBytes: 2, meters: { usd: 5 }, extra: 1 } }],
    ['meters that inherit a toJSON method', { ...admitted, reserved: { calls: 1, inputBytes: 2, meters: withInheritedToJSON({ usd: 5 }) } }],
    ['a settlement charging meters that inherit a toJSON method', { ...completed, charged: withInheritedToJSON({ usd: 5 }) }],
    ['a key binding that inherits a toJSON method', { ...admitted, idempotency: withInheritedToJSON(key) }],
    ['ancestors with a toJSON method', { ...admitted, ancestors: ancestorsWithToJSON }],
    ['ancestors with a toJSON method on a timed admission', { ...admitted, ancestors: ancestorsWithToJSON, deadline: 1_010 }],
    ['an admission that inherits a toJSON method', withInheritedToJSON(admitted)],
    ['a completion that inherits a toJSON method', withInheritedToJSON(completed)],
  ])('writes the general text for %s', (_label, event) => {
    expect(outcome(() => eventTextWithoutHash(event))).toBe(outcome(() => canonicalJsonWithout(event, 'hash')));
  });
});
