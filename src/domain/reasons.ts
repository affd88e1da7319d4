/** Why a call was rejected. Stable strings, listed in precedence order: the first failing check decides. */
export const rejectReasons = [
  'unknown_token',
  'revoked',
  'not_yet_valid',
  'expired',
  'unknown_tool',
  'tool_not_granted',
  'invalid_arguments',
  'argument_not_permitted',
  'invalid_resource',
  'resource_not_permitted',
  'idempotency_conflict',
  'call_budget_exhausted',
  'byte_budget_exhausted',
  'meter_budget_exhausted',
  'rate_limited',
  'idempotency_keys_exhausted',
  'approval_denied',
  'approval_timeout',
  'ledger_unavailable',
] as const;

export type RejectReason = (typeof rejectReasons)[number];

/** Outcome of checking arguments against the tool schema and the grant's narrowing schema. */
export type ArgumentCheck = 'ok' | 'invalid_arguments' | 'argument_not_permitted';
/** Outcome of checking the call's resources against canonical form and the grant's scopes. */
export type ResourceCheck = 'ok' | 'invalid_resource' | 'resource_not_permitted';

// Messages explain the reason; they never echo an argument value, a resource or a token.
const messages: Readonly<Record<RejectReason, string>> = {
  unknown_token: 'the token does not match any grant',
  revoked: 'the grant was revoked',
  not_yet_valid: 'the grant is not valid yet (before notBefore)',
  expired: 'the grant has expired (at or after expiresAt)',
  unknown_tool: 'no tool of that name is registered',
  tool_not_granted: 'the grant does not include this tool',
  invalid_arguments: "the arguments do not satisfy the tool's input schema or are not plain JSON, or the idempotency key is not a string of 1-255 characters",
  argument_not_permitted: "the arguments fall outside the grant's narrowing schema",
  invalid_resource: 'a resource the call touches is not in canonical form',
  resource_not_permitted: "a resource the call touches is outside every scope of the grant",
  idempotency_conflict: 'the idempotency key was already used on this grant with another tool or other arguments',
  idempotency_keys_exhausted: "the grant's delegation tree holds as many unexpired idempotency keys as it may; retry without a key or once keys expire",
  call_budget_exhausted: "the grant's call budget is used up",
  byte_budget_exhausted: "the grant's input-byte budget cannot cover this call",
  meter_budget_exhausted: "a meter of the grant (or an ancestor) cannot cover what this call may cost",
  rate_limited: "the grant (or an ancestor) has admitted as many calls as its rate window allows; retry after retryAfterMs",
  approval_denied: 'a person denied this call (it waited for approval and never ran)',
  approval_timeout: 'nobody approved this call before its approval deadline (it never ran)',
  ledger_unavailable: 'the ledger could not record the decision (store failure, closed, or too many pending commands)',
};

export function rejectMessage(reason: RejectReason): string {
  return messages[reason];
}

export function isRejectReason(value: unknown): value is RejectReason {
  return typeof value === 'string' && (rejectReasons as readonly string[]).includes(value);
}
