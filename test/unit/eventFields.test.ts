import { canonicalJsonWithout } from '../../src/domain/canonicalJson';
import { attenuationRejectReasons, revocationRejectReasons } from '../../src/domain/delegationReasons';
import { eventFields, eventTypes, fieldsOf, type FieldKind } from '../../src/domain/eventFields';
import type { EventPayload, EventType, LedgerEvent } from '../../src/domain/events';
import { eventTextWithoutHash } from '../../src/domain/eventText';
import { hopRefusalReasons } from '../../src/domain/fetchHop';
import { rejectReasons } from '../../src/domain/reasons';
import { eventShapeProblem } from '../../src/verification/eventShape';
import { sameAsDecided } from '../../src/verification/sameAsDecided';

// Walks the event table (src/domain/eventFields.ts): every event type, every field, several values
// of each. The shape schema must accept exactly the table's events, and the hand-written fast paths
// (the hashed text, the re-decided comparison) must agree with the general ones on every field: a
// fast path that drops or mishandles a field (a new one included) fails here.

const h = (c: string): string => c.repeat(64);
const scope = { tools: ['t'], args: {}, resources: [], notBefore: 0, expiresAt: 10, budget: { calls: 1, inputBytes: 10 } };

/** Valid values per field kind, the first the base; the others each differ from it (in one part where the kind has parts). */
const samples: { readonly [K in FieldKind]: readonly unknown[] } = {
  string: ['g1', 'g2', 'quote"and\\back'],
  hex64: [h('a'), h('b')],
  count: [0, 5, Number.MAX_SAFE_INTEGER],
  positive: [1, 7],
  time: [1_000, 2_500.5, -5],
  boolean: [false, true],
  true: [true],
  object: [{ type: 'object' }, { type: 'object', properties: {} }],
  ancestorIds: [['g0'], ['g0', 'g1'], ['g9']],
  amounts: [{ calls: 0, inputBytes: 0 }, { calls: 1, inputBytes: 0 }, { calls: 0, inputBytes: 4 }],
  reservation: [
    { calls: 1, inputBytes: 2 }, { calls: 2, inputBytes: 2 }, { calls: 1, inputBytes: 3 },
    { calls: 1, inputBytes: 2, meters: { usd: 1 } }, { calls: 1, inputBytes: 2, meters: { usd: 2 } },
  ],
  meters: [{ usd: 1 }, { usd: 2 }, { tok: 1 }, { tok: 3, usd: 1 }, {}],
  meterName: ['usd', 'tok'],
  keyBinding: [
    { keyDigest: h('a'), argsDigest: h('b'), expiresAt: 5_000 }, { keyDigest: h('c'), argsDigest: h('b'), expiresAt: 5_000 },
    { keyDigest: h('a'), argsDigest: h('c'), expiresAt: 5_000 }, { keyDigest: h('a'), argsDigest: h('b'), expiresAt: 6_000 },
  ],
  keyDigests: [{ keyDigest: h('a'), argsDigest: h('b') }, { keyDigest: h('c'), argsDigest: h('b') }, { keyDigest: h('a'), argsDigest: h('c') }],
  grantScope: [scope, { ...scope, callTimeoutMs: 5 }, { ...scope, budget: { calls: 1, inputBytes: 10, meters: { usd: 3 }, rate: { calls: 2, windowMs: 100 } } }],
  resourceTemplates: [{ t: ['fs:{path}'] }, { t: ['fs:{paths[]}'] }],
  principal: [{ name: 'alice', policy: 'p', generation: 0 }, { name: 'alice', policy: 'p', generation: 1 }, { name: 'bob', policy: 'p', generation: 0 }],
  rejectReason: rejectReasons.slice(0, 2),
  attenuationRejectReason: attenuationRejectReasons.slice(0, 2),
  revocationRejectReason: revocationRejectReasons.slice(0, 2),
  hopOutcome: ['allowed', 'refused'],
  approvalOutcome: ['approved', 'denied', 'timed_out'],
  hopRefusalReason: hopRefusalReasons.slice(0, 2),
};

const envelope = { seq: 7, at: 1_000, prevHash: h('0'), hash: h('f') };
type Fields = Record<string, unknown>;

function base(type: EventType, extra: readonly string[]): Fields {
  const event: Fields = { ...envelope, type };
  const specs = fieldsOf(type);
  for (const [name, spec] of Object.entries(specs)) {
    if (!spec.optional || extra.includes(name)) event[name] = samples[spec.kind][0];
    for (const needed of extra.includes(name) ? (spec.requires ?? []) : []) event[needed] = samples[(specs[needed] ?? spec).kind][0];
  }
  return event;
}

/** Per type: its required fields only, each optional field alone (with what it requires), and every field. */
function baseEvents(type: EventType): Fields[] {
  const names = Object.keys(fieldsOf(type));
  const optional = names.filter((n) => fieldsOf(type)[n]?.optional === true);
  return [base(type, []), ...optional.map((n) => base(type, [n])), base(type, names)];
}

/** The event with one field set to each other sample value, or removed when optional. */
function variants(event: Fields, type: EventType): { field: string; event: Fields }[] {
  const out: { field: string; event: Fields }[] = [];
  for (const [name, spec] of Object.entries(fieldsOf(type))) {
    for (const value of samples[spec.kind]) if (event[name] !== value && name in event) out.push({ field: name, event: { ...event, [name]: value } });
    if (spec.optional && name in event && !Object.values(fieldsOf(type)).some((s) => s.requires?.includes(name) === true)) {
      const { [name]: _dropped, ...rest } = event;
      out.push({ field: name, event: rest });
    }
  }
  return out;
}

const payloadOf = (event: Fields): EventPayload => {
  const { seq: _s, at: _a, prevHash: _p, hash: _h, ...payload } = event;
  return payload as unknown as EventPayload;
};

describe('the event table (src/domain/eventFields.ts)', () => {
  it('has a sample value for every field kind it uses and names every event type once', () => {
    expect(new Set(eventTypes).size).toBe(eventTypes.length);
    for (const type of eventTypes) for (const spec of Object.values(fieldsOf(type))) expect(samples[spec.kind].length).toBeGreaterThan(0);
    expect(Object.keys(eventFields)).toEqual(eventTypes);
  });

  describe.each(eventTypes.map((t) => [t]))('%s', (type) => {
    const events = baseEvents(type);

    it('is well formed with its required fields, any one optional field, and all of them', () => {
      for (const event of events) expect(eventShapeProblem(event)).toBeUndefined();
    });

    it('is malformed without a required field, with a field of the wrong kind, with an unknown field or a field without the fields it requires', () => {
      const full = events[events.length - 1] as Fields;
      for (const [name, spec] of Object.entries(fieldsOf(type))) {
        const { [name]: _dropped, ...rest } = full;
        if (!spec.optional) expect(eventShapeProblem(rest)).toBeDefined();
        expect(eventShapeProblem({ ...full, [name]: null })).toBeDefined();
        for (const needed of spec.requires ?? []) {
          const { [needed]: _gone, ...without } = base(type, [name]);
          expect(eventShapeProblem(without)).toBeDefined();
        }
      }
      expect(eventShapeProblem({ ...full, unknownField: 1 })).toBeDefined();
    });

    it('hashes the same text on the hand-written path as canonical JSON, for every field and value', () => {
      for (const event of events) {
        expect(eventTextWithoutHash(event)).toBe(canonicalJsonWithout(event, 'hash'));
        for (const v of variants(event, type)) expect([v.field, eventTextWithoutHash(v.event)]).toEqual([v.field, canonicalJsonWithout(v.event, 'hash')]);
        expect(eventTextWithoutHash({ ...event, unknownField: 1 })).toBe(canonicalJsonWithout({ ...event, unknownField: 1 }, 'hash'));
      }
    });

    it('is the same as its decided payload, and differs from it when any one field differs', () => {
      for (const event of events) {
        const payload = payloadOf(event);
        expect(sameAsDecided(payload, event as unknown as LedgerEvent)).toBe(true);
        for (const v of variants(event, type)) {
          expect([v.field, sameAsDecided(payload, v.event as unknown as LedgerEvent)]).toEqual([v.field, false]);
          expect([v.field, sameAsDecided(payloadOf(v.event), event as unknown as LedgerEvent)]).toEqual([v.field, false]);
        }
      }
    });
  });
});
