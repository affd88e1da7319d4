import Ajv from 'ajv';
import { attenuationRejectReasons, revocationRejectReasons } from '../domain/delegationReasons';
import { limits, meterNamePattern } from '../domain/limits';
import { hopRefusalReasons } from '../domain/fetchHop';
import { rejectReasons } from '../domain/reasons';
import { envelopeFields, eventTypes, fieldsOf, type FieldKind, type FieldSpec } from '../domain/eventFields';
import type { EventType } from '../domain/events';

// A log handed to `verify` is untrusted input: check each event's shape before folding it. The
// schema is built from the event table (domain/eventFields.ts): one branch per event type.
// Hashes are checked by a function format rather than `pattern: '^[0-9a-f]{64}$'`: the regular
// expression took ≈ 0.27 µs per field, two fields per event, most of the shape check's cost.
const hex64 = { type: 'string', format: 'hex64' };
// Bounded above: JSON's `1e400` parses to Infinity, which ajv's integer check lets through.
const count = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const amounts = { type: 'object', required: ['calls', 'inputBytes'], additionalProperties: false, properties: { calls: count, inputBytes: count } };
// Named meters: names by a function format (see hex64 on regular expressions), bounded in number.
const meters = { type: 'object', maxProperties: limits.metersPerGrantMax, propertyNames: { format: 'meterName' }, additionalProperties: count };
const positive = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const rate = { type: 'object', required: ['calls', 'windowMs'], additionalProperties: false, properties: { calls: { type: 'integer', minimum: 1, maximum: limits.rateCallsMax }, windowMs: positive } };
const budget = { type: 'object', required: ['calls', 'inputBytes'], additionalProperties: false, properties: { calls: count, inputBytes: count, meters, rate } };
const reservation = { type: 'object', required: ['calls', 'inputBytes'], additionalProperties: false, properties: { calls: count, inputBytes: count, meters } };
// `at` within the range of a JavaScript Date (so never ±Infinity).
const time = { type: 'number', minimum: -8.64e15, maximum: 8.64e15 };
const str = { type: 'string' };
const ids = { type: 'array', items: str };
// A keyed call's digests (never the key): what a binding is matched on; an admission adds its expiry.
const keyDigests = { type: 'object', required: ['keyDigest', 'argsDigest'], additionalProperties: false, properties: { keyDigest: hex64, argsDigest: hex64 } };
const keyBinding = { type: 'object', required: ['keyDigest', 'argsDigest', 'expiresAt'], additionalProperties: false, properties: { keyDigest: hex64, argsDigest: hex64, expiresAt: time } };
const grantScope = {
  type: 'object',
  required: ['tools', 'args', 'resources', 'notBefore', 'expiresAt', 'budget'],
  additionalProperties: false,
  properties: {
    tools: ids,
    args: { type: 'object', additionalProperties: { type: 'object' } },
    resources: ids,
    notBefore: { type: 'number' },
    expiresAt: { type: 'number' },
    budget,
    callTimeoutMs: positive,
    approvals: { type: 'object', additionalProperties: { anyOf: [{ const: true }, { type: 'object' }] } },
    approvalTimeoutMs: positive,
  },
};
const principal = { type: 'object', required: ['name', 'policy', 'generation'], additionalProperties: false, properties: { name: str, policy: str, generation: count } };

/** The JSON Schema of each field kind of the event table (domain/eventFields.ts). */
const kindSchemas: { readonly [K in FieldKind]: object } = {
  string: str,
  hex64,
  count,
  positive,
  time,
  boolean: { type: 'boolean' },
  true: { const: true },
  object: { type: 'object' },
  ancestorIds: { type: 'array', items: str, minItems: 1, maxItems: limits.delegationDepthMax },
  amounts,
  reservation,
  meters,
  meterName: { type: 'string', format: 'meterName' },
  keyBinding,
  keyDigests,
  grantScope,
  resourceTemplates: { type: 'object', additionalProperties: ids },
  principal,
  rejectReason: { enum: [...rejectReasons] },
  attenuationRejectReason: { enum: [...attenuationRejectReasons] },
  revocationRejectReason: { enum: [...revocationRejectReasons] },
  hopOutcome: { enum: ['allowed', 'refused'] },
  hopRefusalReason: { enum: [...hopRefusalReasons] },
  approvalOutcome: { enum: ['approved', 'denied', 'timed_out'] },
};

/** One event type's branch, built from its row of the table: `then` fixes its keys, required fields and dependencies. */
function shape(type: EventType) {
  const specs: Readonly<Record<string, FieldSpec>> = { ...envelopeFields, ...fieldsOf(type) };
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const dependencies: Record<string, readonly string[]> = {};
  for (const [name, spec] of Object.entries(specs)) {
    properties[name] = kindSchemas[spec.kind];
    if (!spec.optional) required.push(name);
    if (spec.requires !== undefined) dependencies[name] = spec.requires;
  }
  required.push('type');
  properties.type = { const: type };
  const then = { required, additionalProperties: false, properties, ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}) };
  return { if: { properties: { type: { const: type } } }, then };
}

const schema = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: [...eventTypes] } },
  allOf: eventTypes.map(shape),
};

const ajv = new Ajv({ strict: false, allErrors: false });
ajv.addFormat('hex64', { type: 'string', validate: isHex64 });
ajv.addFormat('meterName', { type: 'string', validate: (name: string) => meterNamePattern.test(name) });
const validate = ajv.compile(schema);

// Fast path: an object with a known `type` is valid exactly when that type's `then` schema accepts
// it (every other branch's `if` fails), so one small validator decides; errors still come from the
// full schema, so messages are unchanged.
const byType = new Map<unknown, (event: unknown) => boolean>();
for (const branch of schema.allOf) {
  const type = (branch.if.properties.type as { const: string }).const;
  const check = ajv.compile(branch.then);
  byType.set(type, (event) => check(event) === true);
}

// 1 for the characters '0'-'9' and 'a'-'f'. A table and no early exit: hash digits are random, so
// a digit-or-letter branch per character mispredicts about half the time (≈ 0.3 µs per hash, ≈ 0.12 µs here).
const hexDigit = new Uint8Array(128);
for (const c of '0123456789abcdef') hexDigit[c.charCodeAt(0)] = 1;

/** 64 lowercase hexadecimal digits (a SHA-256 digest as the log writes it). */
export function isHex64(text: string): boolean {
  if (text.length !== 64) return false;
  let ok = 1;
  for (let i = 0; i < 64; i++) {
    const c = text.charCodeAt(i);
    ok &= c < 128 ? (hexDigit[c] as number) : 0;
  }
  return ok === 1;
}

/** Says what is wrong with an event's shape, or undefined when it is well formed. */
export function eventShapeProblem(event: unknown): string | undefined {
  if (event !== null && typeof event === 'object' && !Array.isArray(event)) {
    const check = byType.get((event as { type?: unknown }).type);
    if (check !== undefined && check(event)) return undefined;
  }
  if (validate(event)) return undefined;
  const first = validate.errors?.[0];
  return first ? `${first.instancePath || '(event)'} ${first.message ?? 'is malformed'}` : 'malformed event';
}
