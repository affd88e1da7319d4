import type { EventPayload, EventType } from './events';

/**
 * The event vocabulary in one place: every event type's fields, each with its kind (what JSON it
 * holds) and whether it may be absent. The TypeScript payload types (events.ts) are checked against
 * this table at compile time (a field missing here, extra here, or optional on one side only does not
 * compile); the `verify` shape schema is built from it (verification/eventShape.ts); the hand-written
 * fast paths (eventText.ts, verification/sameAsDecided.ts) are tested against it field by field
 * (test/unit/eventFields.test.ts). How to add an event or a field: docs/events.md.
 */
export type FieldKind =
  /** Any string (ids, tool names, resources). */
  | 'string'
  /** 64 lowercase hex digits (a SHA-256 digest). */
  | 'hex64'
  /** A non-negative safe integer. */
  | 'count'
  /** A positive safe integer. */
  | 'positive'
  /** A log time (ms since epoch, within a Date's range). */
  | 'time'
  | 'boolean'
  /** `true`, present only when it holds. */
  | 'true'
  /** A JSON object (a tool's input schema). */
  | 'object'
  /** A child's ancestor grant ids, root first (1 to the delegation depth bound). */
  | 'ancestorIds'
  /** `{ calls, inputBytes }`. */
  | 'amounts'
  /** `{ calls, inputBytes, meters? }`. */
  | 'reservation'
  /** Meter names to non-negative safe integers. */
  | 'meters'
  | 'meterName'
  /** A keyed admission's binding: `{ keyDigest, argsDigest, expiresAt }`. */
  | 'keyBinding'
  /** A keyed call's `{ keyDigest, argsDigest }`. */
  | 'keyDigests'
  | 'grantScope'
  | 'resourceTemplates'
  | 'principal'
  | 'rejectReason'
  | 'attenuationRejectReason'
  | 'revocationRejectReason'
  | 'hopOutcome'
  | 'hopRefusalReason'
  /** How an approval ended: `approved`, `denied` or `timed_out`. */
  | 'approvalOutcome';

export interface FieldSpec {
  readonly kind: FieldKind;
  readonly optional: boolean;
  /** Fields that must be present whenever this one is. */
  readonly requires?: readonly string[];
}

type OptionalKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? K : never }[keyof T];
type FieldsOf<P> = {
  readonly [K in Exclude<keyof P, 'type'>]-?: { readonly kind: FieldKind; readonly optional: K extends OptionalKeys<P> ? true : false; readonly requires?: readonly string[] };
};
/** Per event type, exactly its payload's fields (besides `type`), optional exactly where the payload type says. */
export type EventFieldTable = { readonly [T in EventType]: FieldsOf<Extract<EventPayload, { type: T }>> };

const req = <K extends FieldKind>(kind: K) => ({ kind, optional: false as const });
const opt = <K extends FieldKind>(kind: K, requires?: readonly string[]) => (requires === undefined ? { kind, optional: true as const } : { kind, optional: true as const, requires });

/** The fields every stored event carries around its payload (events.ts, EventEnvelope). */
export const envelopeFields = { seq: req('positive'), at: req('time'), prevHash: req('hex64'), hash: req('hex64') } as const;

export const eventFields = {
  'tool.registered': { tool: req('string'), inputSchema: req('object') },
  'grant.issued': {
    grantId: req('string'),
    tokenDigest: req('hex64'),
    scope: req('grantScope'),
    // A child (issued by attenuate) names its parent and what the parent had left; a root neither.
    parentGrantId: opt('string', ['parentLeft']),
    parentLeft: opt('reservation', ['parentGrantId']),
    resourceTemplates: opt('resourceTemplates'),
    fsBase: opt('string'),
    principal: opt('principal'),
  },
  'grant.revoked': { grantId: req('string'), abortInFlight: req('boolean'), revokedBy: opt('string') },
  'call.admitted': {
    callId: req('string'),
    grantId: req('string'),
    tool: req('string'),
    reserved: req('reservation'),
    ancestors: opt('ancestorIds'),
    deadline: opt('time'),
    idempotency: opt('keyBinding'),
  },
  'call.rejected': {
    callId: req('string'),
    grantId: opt('string'),
    tool: req('string'),
    reason: req('rejectReason'),
    inputBytes: opt('count'),
    cost: opt('meters'),
    meter: opt('meterName'),
    retryAfterMs: opt('positive'),
    idempotency: opt('keyDigests'),
    keysMax: opt('positive'),
  },
  'call.replayed': { callId: req('string'), grantId: req('string'), tool: req('string'), replayOf: req('string'), idempotency: req('keyDigests') },
  'call.completed': { callId: req('string'), grantId: req('string'), tool: req('string'), charged: opt('meters'), overrun: opt('true', ['charged']) },
  'call.failed': {
    callId: req('string'),
    grantId: req('string'),
    tool: req('string'),
    refunded: req('amounts'),
    cancelled: opt('true'),
    charged: opt('meters'),
    overrun: opt('true', ['charged']),
    timedOut: opt('true'),
  },
  'attenuation.rejected': { reason: req('attenuationRejectReason'), parentGrantId: opt('string') },
  'revocation.rejected': { reason: req('revocationRejectReason'), revokedBy: opt('string'), grantId: opt('string') },
  'fetch.hop': {
    callId: req('string'),
    grantId: req('string'),
    tool: req('string'),
    hop: req('count'),
    resource: opt('string'),
    address: opt('string'),
    outcome: req('hopOutcome'),
    reason: opt('hopRefusalReason'),
  },
  // A call waiting for a person, and how the wait ended (docs/approvals.md).
  'approval.requested': {
    approvalId: req('string'),
    callId: req('string'),
    grantId: req('string'),
    tool: req('string'),
    argsDigest: req('hex64'),
    reserved: req('reservation'),
    ancestors: opt('ancestorIds'),
    deadline: req('time'),
    idempotency: opt('keyBinding'),
  },
  'approval.resolved': {
    approvalId: req('string'),
    callId: req('string'),
    grantId: req('string'),
    tool: req('string'),
    outcome: req('approvalOutcome'),
    by: opt('string'),
    note: opt('string'),
    deadline: opt('time'),
  },
} as const satisfies EventFieldTable;

/** Every event type, in the table's order. */
export const eventTypes = Object.keys(eventFields) as readonly EventType[];

/** An event type's fields as plain specs (for code that walks the table). */
export function fieldsOf(type: EventType): Readonly<Record<string, FieldSpec>> {
  return eventFields[type];
}
