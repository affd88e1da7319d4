import fc from 'fast-check';
import { canonicalJsonWithout } from '../../src/domain/canonicalJson';
import { eventTextWithoutHash } from '../../src/domain/eventText';

// The hashed text of an event must be exactly the general canonical JSON, whatever the event holds:
// the direct path for admissions and completions may only ever take a shortcut, never change a byte.
const text = fc.oneof(fc.constantFrom('c_1', 'g_1', 'fs.read', '', 'a'.repeat(64)), fc.string({ unit: 'binary', maxLength: 8 }));
const value = fc.oneof(
  text,
  fc.double(),
  fc.integer(),
  fc.constantFrom(null, undefined, true, -0, Number.NaN, Number.POSITIVE_INFINITY),
  fc.constant({ calls: 1, inputBytes: 2 }),
  fc.constant([1, 2]),
);
const amounts = fc.oneof(
  fc.record({ calls: fc.integer(), inputBytes: fc.integer() }),
  fc.record({ calls: value, inputBytes: value }, { requiredKeys: [] }),
  fc.record({ calls: fc.integer(), inputBytes: fc.integer(), extra: value }),
  fc.constant({ calls: 1, inputBytes: 2, toJSON: () => 'x' }),
  // A metered reservation (issue 12) and near-misses: odd names, non-integers, nesting, toJSON.
  fc.record({ calls: fc.integer(), inputBytes: fc.integer(), meters: fc.dictionary(fc.oneof(text, fc.constantFrom('usd_micros', 'b', 'a', '__proto__', 'Z')), fc.oneof(fc.integer(), value), { maxKeys: 4 }) }),
  fc.record({ calls: fc.integer(), inputBytes: fc.integer(), meters: value }),
  value,
);
const charged = fc.oneof(
  fc.dictionary(fc.constantFrom('usd_micros', 'tokens', 'a', 'é', '\u{1F600}'), fc.integer(), { maxKeys: 3 }),
  fc.dictionary(text, fc.oneof(fc.integer(), value), { maxKeys: 3 }),
  fc.constant(Object.assign({ a: 1 }, { toJSON: () => 'x' })),
  value,
);
const event = fc
  .record(
    {
      type: fc.constantFrom('call.admitted', 'call.completed', 'call.failed', 'grant.revoked'),
      at: fc.oneof(fc.integer(), fc.double(), value),
      callId: text,
      grantId: fc.oneof(text, value),
      prevHash: text,
      hash: fc.oneof(text, fc.constant(undefined)),
      seq: fc.oneof(fc.integer({ min: 1 }), value),
      tool: text,
      reserved: amounts,
      charged,
      overrun: fc.oneof(fc.constant(true), value),
      // A child grant's call names its ancestors; near-misses: other values, holes, non-strings, toJSON.
      ancestors: fc.oneof(
        fc.array(text, { maxLength: 3 }),
        fc.array(fc.oneof(text, value), { maxLength: 3 }),
        fc.constant(Object.assign(['g_1'], { toJSON: () => 'x' })),
        fc.constant([, 'g_1']),
        value,
      ),
      // A timed or keyed admission (issue 12); near-misses: other values, extra or missing fields, toJSON.
      deadline: fc.oneof(fc.integer(), value),
      idempotency: fc.oneof(
        fc.record({ argsDigest: text, expiresAt: fc.integer(), keyDigest: text }),
        fc.record({ argsDigest: fc.oneof(text, value), expiresAt: value, keyDigest: fc.oneof(text, value), extra: value }, { requiredKeys: [] }),
        fc.constant(Object.assign({ argsDigest: 'a', expiresAt: 1, keyDigest: 'k' }, { toJSON: () => 'x' })),
        fc.constant(Object.assign(Object.create({ inherited: 1 }) as object, { argsDigest: 'a', expiresAt: 1, keyDigest: 'k' })),
        value,
      ),
      extra: value,
    },
    { requiredKeys: [] },
  )
  .map((e) => e as Record<string, unknown>);

const outcome = (f: () => string): { text?: string; threw?: boolean } => {
  try {
    return { text: f() };
  } catch {
    return { threw: true };
  }
};

describe('eventTextWithoutHash', () => {
  it('equals the general canonical JSON without hash on arbitrary near-events', () => {
    fc.assert(
      fc.property(event, (e) => {
        expect(outcome(() => eventTextWithoutHash(e))).toEqual(outcome(() => canonicalJsonWithout(e, 'hash')));
      }),
      { numRuns: 5_000 },
    );
  });

  it('equals it on well-formed admissions and completions, strings that need escaping included', () => {
    const str = fc.string({ unit: 'binary', maxLength: 12 });
    const admitted = fc.record({ type: fc.constant('call.admitted'), at: fc.integer(), callId: str, grantId: str, prevHash: str, hash: str, seq: fc.integer({ min: 1 }), tool: str, reserved: fc.record({ calls: fc.integer(), inputBytes: fc.integer() }), ancestors: fc.array(str, { minLength: 1, maxLength: 8 }) }, { requiredKeys: ['type', 'at', 'callId', 'grantId', 'prevHash', 'hash', 'seq', 'tool', 'reserved'] });
    const completed = fc.record({ type: fc.constant('call.completed'), at: fc.double({ noNaN: true, noDefaultInfinity: true }), callId: str, grantId: str, prevHash: str, seq: fc.integer({ min: 1 }), tool: str });
    fc.assert(fc.property(fc.oneof(admitted, completed), (e) => eventTextWithoutHash(e) === canonicalJsonWithout(e, 'hash')), { numRuns: 5_000 });
  });

  it("writes a child grant's admission with its ancestors first", () => {
    const e = { type: 'call.admitted', tool: 't', seq: 2, reserved: { inputBytes: 5, calls: 1 }, prevHash: 'p', hash: 'h', grantId: 'g', callId: 'c', at: 7, ancestors: ['r', 'p"'] };
    expect(eventTextWithoutHash(e)).toBe('{"ancestors":["r","p\\""],"at":7,"callId":"c","grantId":"g","prevHash":"p","reserved":{"calls":1,"inputBytes":5},"seq":2,"tool":"t","type":"call.admitted"}');
    expect(eventTextWithoutHash(e)).toBe(canonicalJsonWithout(e, 'hash'));
  });

  it('equals it on well-formed metered admissions and settlements (issue 12)', () => {
    const str = fc.string({ unit: 'binary', maxLength: 12 });
    const meters = fc.dictionary(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), fc.integer({ min: 0 }), { maxKeys: 16 });
    const admitted = fc.record({ type: fc.constant('call.admitted'), at: fc.integer(), callId: str, grantId: str, prevHash: str, hash: str, seq: fc.integer({ min: 1 }), tool: str, reserved: fc.record({ calls: fc.integer(), inputBytes: fc.integer(), meters }), ancestors: fc.array(str, { minLength: 1, maxLength: 8 }) }, { requiredKeys: ['type', 'at', 'callId', 'grantId', 'prevHash', 'hash', 'seq', 'tool', 'reserved'] });
    const completed = fc.record({ type: fc.constant('call.completed'), at: fc.integer(), callId: str, grantId: str, prevHash: str, hash: str, seq: fc.integer({ min: 1 }), tool: str, charged: meters, overrun: fc.constant(true) }, { requiredKeys: ['type', 'at', 'callId', 'grantId', 'prevHash', 'seq', 'tool', 'charged'] });
    fc.assert(fc.property(fc.oneof(admitted, completed), (e) => eventTextWithoutHash(e) === canonicalJsonWithout(e, 'hash')), { numRuns: 5_000 });
  });

  it('equals it on well-formed timed and keyed admissions, with or without ancestors (issue 12)', () => {
    const str = fc.string({ unit: 'binary', maxLength: 12 });
    const idempotency = fc.record({ argsDigest: str, expiresAt: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), keyDigest: str });
    const admitted = fc.record(
      { type: fc.constant('call.admitted'), at: fc.integer(), callId: str, grantId: str, prevHash: str, hash: str, seq: fc.integer({ min: 1 }), tool: str, reserved: fc.record({ calls: fc.integer(), inputBytes: fc.integer() }), ancestors: fc.array(str, { minLength: 1, maxLength: 8 }), deadline: fc.integer(), idempotency },
      { requiredKeys: ['type', 'at', 'callId', 'grantId', 'prevHash', 'seq', 'tool', 'reserved'] },
    );
    fc.assert(fc.property(admitted, (e) => eventTextWithoutHash(e) === canonicalJsonWithout(e, 'hash')), { numRuns: 5_000 });
  });

  it('writes a keyed, timed child admission with its fields in canonical order', () => {
    const e = { type: 'call.admitted', tool: 't', seq: 2, reserved: { inputBytes: 5, calls: 1 }, prevHash: 'p', hash: 'h', idempotency: { keyDigest: 'k', expiresAt: 9, argsDigest: 'a' }, grantId: 'g', deadline: 8, callId: 'c', at: 7, ancestors: ['r'] };
    expect(eventTextWithoutHash(e)).toBe('{"ancestors":["r"],"at":7,"callId":"c","deadline":8,"grantId":"g","idempotency":{"argsDigest":"a","expiresAt":9,"keyDigest":"k"},"prevHash":"p","reserved":{"calls":1,"inputBytes":5},"seq":2,"tool":"t","type":"call.admitted"}');
    expect(eventTextWithoutHash(e)).toBe(canonicalJsonWithout(e, 'hash'));
  });

  it('writes a metered settlement with charged after callId and overrun after grantId', () => {
    const e = { type: 'call.completed', tool: 't', seq: 3, prevHash: 'p', hash: 'h', grantId: 'g', callId: 'c', at: 7, overrun: true, charged: { usd_micros: 40, a: 1 } };
    expect(eventTextWithoutHash(e)).toBe('{"at":7,"callId":"c","charged":{"a":1,"usd_micros":40},"grantId":"g","overrun":true,"prevHash":"p","seq":3,"tool":"t","type":"call.completed"}');
    expect(eventTextWithoutHash(e)).toBe(canonicalJsonWithout(e, 'hash'));
  });

  it('writes an admission with its keys in canonical order', () => {
    const e = { type: 'call.admitted', tool: 't', seq: 2, reserved: { inputBytes: 5, calls: 1 }, prevHash: 'p', hash: 'h', grantId: 'g', callId: 'c', at: 7 };
    expect(eventTextWithoutHash(e)).toBe('{"at":7,"callId":"c","grantId":"g","prevHash":"p","reserved":{"calls":1,"inputBytes":5},"seq":2,"tool":"t","type":"call.admitted"}');
  });
});
