import type { Command } from '../domain/commands';
import type { LedgerEvent } from '../domain/events';

/**
 * The command that must have produced a logged event, as far as the log can tell. Argument and
 * resource checks ran host code on values the log never holds, so a logged argument/resource
 * rejection is taken as that check's outcome and an admission as all checks passing; everything
 * else (grant, revocation, validity window, tool scope, precedence, budget arithmetic) is re-decided.
 */
// The bound on live keys is a host option (like the TTL) the log records only where it refused a
// call (`keysMax` on idempotency_keys_exhausted); elsewhere it is taken as no bound.
const unbounded = Number.MAX_SAFE_INTEGER;

export function commandFromEvent(event: LedgerEvent): Command {
  const at = event.at;
  switch (event.type) {
    case 'tool.registered':
      return { type: 'registerTool', at, tool: event.tool, inputSchema: event.inputSchema };
    case 'grant.issued':
      if (event.parentGrantId === undefined) {
        return {
          type: 'issue',
          at,
          grantId: event.grantId,
          tokenDigest: event.tokenDigest,
          scope: event.scope,
          ...(event.resourceTemplates !== undefined ? { resourceTemplates: event.resourceTemplates } : {}),
          ...(event.fsBase !== undefined ? { fsBase: event.fsBase } : {}),
          ...(event.principal !== undefined ? { principal: event.principal } : {}),
        };
      }
      // A child: re-decided as an attenuation asking for exactly the scope it got, so `decide` re-checks
      // it against its parent as the parent stood at `at` (and re-derives `parentLeft`).
      return { type: 'attenuate', at, parentGrantId: event.parentGrantId, grantId: event.grantId, tokenDigest: event.tokenDigest, request: { kind: 'narrowing', narrowing: event.scope } };
    case 'grant.revoked':
      if (event.revokedBy === undefined) return { type: 'revoke', at, grantId: event.grantId, abortInFlight: event.abortInFlight };
      return { type: 'revokeDelegation', at, byGrantId: event.revokedBy, grantId: event.grantId, abortInFlight: event.abortInFlight };
    case 'attenuation.rejected':
      // The log does not hold a refused request: its malformed/widens verdict is taken as logged, the
      // parent chain's authority (which would have decided first) is re-derived.
      return { type: 'attenuate', at, parentGrantId: event.parentGrantId, grantId: '', tokenDigest: '', request: { kind: event.reason === 'attenuation_widens' ? 'widens' : 'invalid' } };
    case 'revocation.rejected':
      return { type: 'revokeDelegation', at, byGrantId: event.revokedBy, grantId: event.grantId, abortInFlight: false };
    case 'call.admitted':
      // A keyed admission re-decides its key against the bindings folded so far (a live one would replay or conflict).
      if (event.idempotency !== undefined) {
        return { type: 'admit', at, callId: event.callId, grantId: event.grantId, tool: event.tool, inputBytes: event.reserved.inputBytes, argumentCheck: 'ok', resourceCheck: 'ok', ...(event.reserved.meters !== undefined ? { cost: event.reserved.meters } : {}), idempotency: { ...event.idempotency, keysMax: unbounded } };
      }
      // The tool's cost(args) ran host code: its outcome is taken as logged; meters and windows are re-decided.
      if (event.reserved.meters !== undefined) return { type: 'admit', at, callId: event.callId, grantId: event.grantId, tool: event.tool, inputBytes: event.reserved.inputBytes, argumentCheck: 'ok', resourceCheck: 'ok', cost: event.reserved.meters };
      return { type: 'admit', at, callId: event.callId, grantId: event.grantId, tool: event.tool, inputBytes: event.reserved.inputBytes, argumentCheck: 'ok', resourceCheck: 'ok' };
    case 'call.replayed':
      // A replay is answered before any budget check, so its size and cost do not matter; it binds
      // nothing, so the expiry is only filler (`at`).
      return { type: 'admit', at, callId: event.callId, grantId: event.grantId, tool: event.tool, inputBytes: 0, argumentCheck: 'ok', resourceCheck: 'ok', idempotency: { ...event.idempotency, expiresAt: at, keysMax: unbounded } };
    case 'call.rejected': {
      const r = event.reason;
      return {
        type: 'admit',
        at,
        callId: event.callId,
        grantId: event.grantId,
        tool: event.tool,
        inputBytes: event.inputBytes,
        argumentCheck: r === 'invalid_arguments' || r === 'argument_not_permitted' ? r : 'ok',
        resourceCheck: r === 'invalid_resource' || r === 'resource_not_permitted' ? r : 'ok',
        ...(event.cost !== undefined ? { cost: event.cost } : {}),
        // A refused keyed call made no binding: its expiry does not matter (filler: `at`).
        ...(event.idempotency !== undefined ? { idempotency: { ...event.idempotency, expiresAt: at, keysMax: event.keysMax ?? unbounded } } : {}),
      };
    }
    case 'call.completed':
      // A metered settlement: the report is not logged, its clamped charge is; re-deciding with the
      // charge as the report re-checks that it stays within the reservation.
      if (event.charged !== undefined) return { type: 'settle', at, callId: event.callId, outcome: 'completed', refund: false, report: event.charged, overrunLogged: event.overrun === true };
      return { type: 'settle', at, callId: event.callId, outcome: 'completed', refund: false };
    case 'fetch.hop':
      return { type: 'hop', at, callId: event.callId, hop: event.hop, resource: event.resource, address: event.address };
    case 'approval.requested':
      // Whether a schema rule matched ran host code on the arguments: taken as logged. A `true` rule
      // is re-derived (decide refuses a plain admission it applies to). The ledger's default wait is
      // a host option the log shows only as this deadline; a grant's own timeout is re-derived.
      return {
        type: 'admit', at, callId: event.callId, grantId: event.grantId, tool: event.tool, inputBytes: event.reserved.inputBytes, argumentCheck: 'ok', resourceCheck: 'ok',
        ...(event.reserved.meters !== undefined ? { cost: event.reserved.meters } : {}),
        approval: { approvalId: event.approvalId, argsDigest: event.argsDigest, defaultTimeoutMs: Math.max(1, event.deadline - at) },
        // A keyed wait re-decides its key as a keyed admission does.
        ...(event.idempotency !== undefined ? { idempotency: { ...event.idempotency, keysMax: unbounded } } : {}),
      };
    case 'approval.resolved':
      return { type: 'resolveApproval', at, approvalId: event.approvalId, outcome: event.outcome, ...(event.by !== undefined ? { by: event.by } : {}), ...(event.note !== undefined ? { note: event.note } : {}) };
    case 'call.failed':
      // The ledger's timeout: re-decided against the call's deadline (a metered one is charged in full, or refunded).
      if (event.timedOut === true) return { type: 'timeout', at, callId: event.callId, refund: event.refunded.calls !== 0 || event.refunded.inputBytes !== 0 };
      return {
        type: 'settle',
        at,
        callId: event.callId,
        outcome: 'failed',
        refund: event.refunded.calls !== 0 || event.refunded.inputBytes !== 0,
        ...(event.cancelled === true ? { cancelled: true } : {}),
        ...(event.charged !== undefined ? { report: event.charged, overrunLogged: event.overrun === true } : {}),
      };
  }
}
