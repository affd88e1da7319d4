import { canonicalJson } from './canonicalJson';
import type { AdmitCommand, Command, HopCommand, IssueCommand, RegisterToolCommand, RevokeCommand, SettleCommand, TimeoutCommand } from './commands';
import type { CallAdmittedPayload, CallRejectedPayload, MeterAmounts, Reservation } from './events';
import { canBindKey, liveBinding, type KeyedAdmission } from './idempotency';
import { emit, none, refuse, type Decision } from './decision';
import { decideAttenuate, decideRevokeDelegation } from './decideDelegation';
import { ancestorRecords, chainAuthority } from './grantChain';
import { chainHopDecision } from './fetchHop';
import { grantScopeProblem, resourceTemplatesProblem } from './grantSpec';
import { chainAlwaysAsks } from './approvalSpec';
import { approvalRequested, decideResolveApproval } from './decideApproval';
import { principalGrantProblem } from './principals';
import { exhaustedMeter, settlementCharge } from './meters';
import { chainRateWait } from './rateWindow';
import { toolNamePattern } from './limits';
import type { RejectReason } from './reasons';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

export type { Decision, HostCommandErrorCode } from './decision';

/**
 * The authority checks that need only the log: token, revocation, validity window, tool.
 * Shared by `decide` and by the shell, which uses it to skip argument checks for calls that are
 * rejected anyway.
 */
export function checkAuthority(
  state: LedgerState,
  grantId: string | undefined,
  tool: string,
  at: number,
):
  | { readonly ok: true; readonly grant: GrantRecord; readonly ancestors: readonly GrantRecord[] }
  | { readonly ok: false; readonly reason: RejectReason; readonly grant?: GrantRecord } {
  const chain = chainAuthority(state, grantId, at);
  if (!chain.ok) return chain;
  const grant = chain.grant;
  if (!Object.prototype.hasOwnProperty.call(state.tools, tool)) return { ok: false, reason: 'unknown_tool', grant };
  // A child's tools are a subset of its parent's (checked at issue): the grant's own list decides.
  if (!grant.scope.tools.includes(tool)) return { ok: false, reason: 'tool_not_granted', grant };
  return chain;
}

/** Which budget of the chain (the grant and every ancestor) cannot take one more call of `inputBytes`. */
function budgetReason(grant: GrantRecord, ancestors: readonly GrantRecord[], inputBytes: number): RejectReason | undefined {
  if (grant.used.calls + 1 > grant.scope.budget.calls) return 'call_budget_exhausted';
  for (const a of ancestors) if (a.used.calls + 1 > a.scope.budget.calls) return 'call_budget_exhausted';
  if (grant.used.inputBytes + inputBytes > grant.scope.budget.inputBytes) return 'byte_budget_exhausted';
  for (const a of ancestors) if (a.used.inputBytes + inputBytes > a.scope.budget.inputBytes) return 'byte_budget_exhausted';
  return undefined;
}

/** What `decide` makes of an admission: admitted, a replay of a keyed call, or rejected (with what the rejection reports). */
type Verdict =
  | {
      readonly kind: 'admit';
      readonly grant: GrantRecord;
      /** The chain's records (for its deadline). */
      readonly ancestors: readonly GrantRecord[];
      readonly inputBytes: number;
    }
  | {
      /** A retry of a call this grant admitted with the same idempotency key, tool and arguments. */
      readonly kind: 'replay';
      readonly grant: GrantRecord;
      readonly replayOf: string;
      readonly key: KeyedAdmission;
    }
  | {
      readonly kind: 'reject';
      readonly reason: RejectReason;
      /** Absent when the token matched no grant. */
      readonly grant?: GrantRecord;
      /** On `meter_budget_exhausted`. */
      readonly meter?: string;
      /** On `rate_limited`. */
      readonly retryAfterMs?: number;
    };

const rejection = (reason: RejectReason, grant: GrantRecord | undefined): Verdict => (grant === undefined ? { kind: 'reject', reason } : { kind: 'reject', reason, grant });

function admissionVerdict(state: LedgerState, command: AdmitCommand): Verdict {
  const authority = checkAuthority(state, command.grantId, command.tool, command.at);
  if (!authority.ok) return rejection(authority.reason, authority.grant);
  const grant = authority.grant;
  if (command.argumentCheck !== 'ok') return rejection(command.argumentCheck, grant);
  // Arguments that are not plain JSON have no canonical size: the shell reports them so (decide is public, so told again here).
  if (command.inputBytes === undefined) return rejection('invalid_arguments', grant);
  if (command.resourceCheck !== 'ok') return rejection(command.resourceCheck, grant);
  const key = command.idempotency;
  if (key !== undefined) {
    // Before any budget check: a retry reserves nothing, so a spent budget does not refuse it.
    const binding = liveBinding(state, grant.grantId, key.keyDigest, command.at);
    if (binding !== undefined) {
      if (binding.argsDigest !== key.argsDigest || binding.tool !== command.tool) return rejection('idempotency_conflict', grant);
      return { kind: 'replay', grant, replayOf: binding.callId, key };
    }
  }
  const budget = budgetReason(grant, authority.ancestors, command.inputBytes);
  if (budget !== undefined) return rejection(budget, grant);
  // Meters, then rate windows: a budget refusal is permanent, a rate refusal passes with time.
  if (command.cost !== undefined) {
    const meter = exhaustedMeter(grant, authority.ancestors, command.cost);
    if (meter !== undefined) return { kind: 'reject', reason: 'meter_budget_exhausted', grant, meter };
  }
  if (grant.admissions !== undefined || grant.ancestors !== undefined) {
    const wait = chainRateWait(grant, authority.ancestors, command.at);
    if (wait > 0) return { kind: 'reject', reason: 'rate_limited', grant, retryAfterMs: wait };
  }
  // Last: fail closed rather than forget an unexpired key (its retry would run twice).
  if (key !== undefined && !canBindKey((authority.ancestors[0] ?? grant).keyQueue, command.at, key.keysMax)) return rejection('idempotency_keys_exhausted', grant);
  return { kind: 'admit', grant, ancestors: authority.ancestors, inputBytes: command.inputBytes };
}

/**
 * The least `callTimeoutMs` along a grant's chain, or undefined when none has one. A child's is at
 * most its parent's (checked at issue), so the grant's own usually decides; the walk makes a log
 * that `verify` would refuse no more lenient.
 */
function chainTimeout(grant: GrantRecord, ancestors: readonly GrantRecord[] | undefined): number | undefined {
  let least = grant.scope.callTimeoutMs;
  if (ancestors === undefined) return least;
  for (const a of ancestors) {
    const t = a.scope.callTimeoutMs;
    if (t !== undefined && (least === undefined || t < least)) least = t;
  }
  return least;
}

function decideAdmit(state: LedgerState, command: AdmitCommand): Decision {
  const verdict = admissionVerdict(state, command);
  switch (verdict.kind) {
    case 'replay': {
      const { grant, key } = verdict;
      return emit({ type: 'call.replayed', callId: command.callId, grantId: grant.grantId, tool: command.tool, replayOf: verdict.replayOf, idempotency: { keyDigest: key.keyDigest, argsDigest: key.argsDigest } });
    }
    case 'admit': {
      // Every other check passed: a call the chain's approval rules ask about reserves and waits.
      const { grant, ancestors, inputBytes } = verdict;
      if (command.approval !== undefined) {
        // An approval id names one wait, ever: a reused one (a forged log, a shell bug) is refused.
        const id = command.approval.approvalId;
        if ((state.approvals !== undefined && shardGet(state.approvals, id) !== undefined) || (state.approvalsEnded !== undefined && shardGet(state.approvalsEnded, id) !== undefined)) return refuse('invalid_approval', 'the approval id was already used');
        return approvalRequested(command.callId, command.tool, command.at, grant, ancestors, reservation(command, inputBytes), command.approval, command.idempotency);
      }
      if (chainAlwaysAsks(grant, ancestors, command.tool)) return refuse('approval_required', 'the grant asks a person about every call to this tool, and the command carries no approval request');
      return emit(admitted(command, grant, ancestors, inputBytes));
    }
    case 'reject':
      return emit(rejected(command, verdict));
  }
}

/** What an admission (or a wait for approval) reserves: one call, its bytes, and its tool's cost when it has one. */
function reservation(command: AdmitCommand, inputBytes: number): Reservation {
  const cost: MeterAmounts | undefined = command.cost;
  return cost === undefined ? { calls: 1, inputBytes } : { calls: 1, inputBytes, meters: cost };
}

function admitted(command: AdmitCommand, grant: GrantRecord, ancestors: readonly GrantRecord[], inputBytes: number): CallAdmittedPayload {
  const key = command.idempotency;
  const reserved = reservation(command, inputBytes);
  const timeout = chainTimeout(grant, ancestors);
  if (key !== undefined) {
    // A keyed admission binds its key: built field by field (the rarer shape).
    const keyed: { -readonly [K in keyof CallAdmittedPayload]: CallAdmittedPayload[K] } = { type: 'call.admitted', callId: command.callId, grantId: grant.grantId, tool: command.tool, reserved };
    if (grant.ancestors !== undefined) keyed.ancestors = grant.ancestors;
    if (timeout !== undefined) keyed.deadline = command.at + timeout;
    keyed.idempotency = { keyDigest: key.keyDigest, argsDigest: key.argsDigest, expiresAt: key.expiresAt };
    return keyed;
  }
  // Literal objects of one shape each (the common ones), so the event's hidden class stays fixed.
  if (timeout !== undefined) {
    const deadline = command.at + timeout;
    if (grant.ancestors !== undefined) return { type: 'call.admitted', callId: command.callId, grantId: grant.grantId, tool: command.tool, reserved, ancestors: grant.ancestors, deadline };
    return { type: 'call.admitted', callId: command.callId, grantId: grant.grantId, tool: command.tool, reserved, deadline };
  }
  // A child's call names its ancestors (root first): the event says which grants it is reserved on.
  // A record has `ancestors` only on a child, and then never empty (records.ts, grantRecord).
  if (grant.ancestors !== undefined) return { type: 'call.admitted', callId: command.callId, grantId: grant.grantId, tool: command.tool, reserved, ancestors: grant.ancestors };
  return { type: 'call.admitted', callId: command.callId, grantId: grant.grantId, tool: command.tool, reserved };
}

function rejected(command: AdmitCommand, verdict: Extract<Verdict, { kind: 'reject' }>): CallRejectedPayload {
  const { reason, grant } = verdict;
  const cost = command.cost;
  const key = command.idempotency;
  return {
    type: 'call.rejected',
    callId: command.callId,
    ...(grant !== undefined ? { grantId: grant.grantId } : {}),
    tool: command.tool,
    reason,
    ...(command.inputBytes !== undefined ? { inputBytes: command.inputBytes } : {}),
    // The cost only where it decided (meters) or was passed (rate windows come after meters); an
    // earlier refusal does not depend on it, so its event stays as before meters existed.
    ...(cost !== undefined && (reason === 'meter_budget_exhausted' || reason === 'rate_limited') ? { cost } : {}),
    ...(verdict.meter !== undefined ? { meter: verdict.meter } : {}),
    ...(verdict.retryAfterMs !== undefined ? { retryAfterMs: verdict.retryAfterMs } : {}),
    ...(key !== undefined ? { idempotency: { keyDigest: key.keyDigest, argsDigest: key.argsDigest } } : {}),
    // The host's bound that refused it (a host option like the TTL), so `verify` re-decides the refusal.
    ...(reason === 'idempotency_keys_exhausted' && key !== undefined ? { keysMax: key.keysMax } : {}),
  };
}

function decideRegisterTool(state: LedgerState, command: RegisterToolCommand): Decision {
  // `test` would read a number or an object by its text (5 → '5'): decide is public, so check the type too.
  if (typeof command.tool !== 'string' || !toolNamePattern.test(command.tool)) return refuse('invalid_tool', `tool name must match ${toolNamePattern}`);
  if (command.inputSchema === null || typeof command.inputSchema !== 'object' || Array.isArray(command.inputSchema)) {
    return refuse('invalid_tool', 'inputSchema must be a JSON Schema object');
  }
  // An own lookup: `constructor`, `toString`… are valid tool names, not inherited members.
  const existing = Object.prototype.hasOwnProperty.call(state.tools, command.tool) ? state.tools[command.tool] : undefined;
  if (existing === undefined) return emit({ type: 'tool.registered', tool: command.tool, inputSchema: command.inputSchema });
  // Re-attaching an implementation after a restart appends nothing; a changed schema needs a new name.
  if (canonicalJson(existing.inputSchema) === canonicalJson(command.inputSchema)) return none;
  return refuse('tool_conflict', `tool ${command.tool} is already registered with a different inputSchema; register the changed tool under a new name`);
}

function decideIssue(state: LedgerState, command: IssueCommand): Decision {
  if (shardGet(state.grants, command.grantId) !== undefined) return refuse('duplicate_grant', 'grant id already issued');
  if (shardGet(state.tokens, command.tokenDigest) !== undefined) return refuse('duplicate_grant', 'token digest already issued');
  const problem = grantScopeProblem(state, command.scope) ?? resourceTemplatesProblem(command.scope, command.resourceTemplates, command.fsBase);
  if (problem !== undefined) return refuse('invalid_grant', problem);
  const principalProblem = command.principal === undefined ? undefined : principalGrantProblem(state, command.principal, command.grantId, command.at);
  if (principalProblem !== undefined) return refuse('invalid_grant', principalProblem);
  return emit({
    type: 'grant.issued',
    grantId: command.grantId,
    tokenDigest: command.tokenDigest,
    scope: command.scope,
    ...(command.resourceTemplates !== undefined ? { resourceTemplates: command.resourceTemplates } : {}),
    ...(command.fsBase !== undefined ? { fsBase: command.fsBase } : {}),
    ...(command.principal !== undefined ? { principal: { name: command.principal.name, policy: command.principal.policy, generation: command.principal.generation } } : {}),
  });
}

function decideRevoke(state: LedgerState, command: RevokeCommand): Decision {
  const grant = shardGet(state.grants, command.grantId);
  if (grant === undefined) return refuse('unknown_grant', 'no grant has that id');
  if (grant.revoked) return none;
  return emit({ type: 'grant.revoked', grantId: grant.grantId, abortInFlight: command.abortInFlight });
}

function decideSettle(state: LedgerState, command: SettleCommand): Decision {
  const call = shardGet(state.inFlight, command.callId);
  if (call === undefined) return refuse('unknown_call', 'no call in flight has that id');
  if (call.reserved.meters !== undefined) return decideMeteredSettle(call.callId, call.grantId, call.tool, call.reserved.meters, call.reserved, command);
  // Literals rather than a spread of shared fields: this runs for every settled call (and in verify).
  if (command.outcome === 'completed') return emit({ type: 'call.completed', callId: call.callId, grantId: call.grantId, tool: call.tool });
  const refunded = command.refund ? call.reserved : { calls: 0, inputBytes: 0 };
  if (command.cancelled === true) return emit({ type: 'call.failed', callId: call.callId, grantId: call.grantId, tool: call.tool, refunded, cancelled: true });
  return emit({ type: 'call.failed', callId: call.callId, grantId: call.grantId, tool: call.tool, refunded });
}

/**
 * Settles a call that reserved meters (two-phase: post the real amount, release the rest): the
 * report clamped to the reservation per meter, the whole reservation without one, nothing on a
 * refund; `overrun` when the report asked for more (the ledger never charges beyond a reservation).
 */
function decideMeteredSettle(callId: string, grantId: string, tool: string, meters: MeterAmounts, reserved: Reservation, command: SettleCommand): Decision {
  const refund = command.outcome === 'failed' && command.refund;
  const { charged, overrun } = settlementCharge(meters, command.report, refund);
  const flagged = overrun || command.overrunLogged === true;
  if (command.outcome === 'completed') {
    return emit(flagged ? { type: 'call.completed', callId, grantId, tool, charged, overrun: true } : { type: 'call.completed', callId, grantId, tool, charged });
  }
  const refunded = refund ? { calls: reserved.calls, inputBytes: reserved.inputBytes } : { calls: 0, inputBytes: 0 };
  return emit({ type: 'call.failed', callId, grantId, tool, refunded, ...(command.cancelled === true ? { cancelled: true as const } : {}), charged, ...(flagged ? { overrun: true as const } : {}) });
}

/**
 * The ledger settles a call whose deadline has come (its timer, or a reopened ledger's sweep). Before
 * the deadline, or for a call without one, it is refused: a timeout is a fact of log time, so a
 * logged one dated before its deadline is a forgery `verify` finds. A metered call is charged as a
 * failed call without a report: its whole reservation, or nothing on a refund.
 */
function decideTimeout(state: LedgerState, command: TimeoutCommand): Decision {
  const call = shardGet(state.inFlight, command.callId);
  if (call === undefined) return refuse('unknown_call', 'no call in flight has that id');
  if (call.deadline === undefined || command.at < call.deadline) return refuse('call_not_due', 'the call has no deadline or it has not come yet');
  const refunded = command.refund ? { calls: call.reserved.calls, inputBytes: call.reserved.inputBytes } : { calls: 0, inputBytes: 0 };
  if (call.reserved.meters !== undefined) {
    const { charged } = settlementCharge(call.reserved.meters, undefined, command.refund);
    return emit({ type: 'call.failed', callId: call.callId, grantId: call.grantId, tool: call.tool, refunded, charged, timedOut: true });
  }
  return emit({ type: 'call.failed', callId: call.callId, grantId: call.grantId, tool: call.tool, refunded, timedOut: true });
}

/** A hop of a running call's fetch, checked against that call's grant and every ancestor's (see fetchHop.ts). */
function decideHop(state: LedgerState, command: HopCommand): Decision {
  const call = shardGet(state.inFlight, command.callId);
  const grant = call === undefined ? undefined : shardGet(state.grants, call.grantId);
  if (call === undefined || grant === undefined) return refuse('unknown_call', 'no call in flight has that id');
  // A missing ancestor happens only in a log verify refuses anyway: fail closed (no scopes allow nothing).
  const ancestors = ancestorRecords(state, grant)?.map((a) => a.scope.resources) ?? [[]];
  const verdict = chainHopDecision(grant.scope.resources, ancestors, command);
  return emit({
    type: 'fetch.hop',
    callId: call.callId,
    grantId: call.grantId,
    tool: call.tool,
    hop: command.hop,
    ...(command.resource !== undefined ? { resource: command.resource } : {}),
    ...(command.address !== undefined ? { address: command.address } : {}),
    ...(verdict === 'allowed' ? { outcome: 'allowed' as const } : { outcome: 'refused' as const, reason: verdict }),
  });
}

/** The pure decider: which events does this command cause in this state? No I/O, no clock. */
export function decide(state: LedgerState, command: Command): Decision {
  switch (command.type) {
    case 'admit':
      return decideAdmit(state, command);
    case 'settle':
      return decideSettle(state, command);
    case 'issue':
      return decideIssue(state, command);
    case 'revoke':
      return decideRevoke(state, command);
    case 'registerTool':
      return decideRegisterTool(state, command);
    case 'attenuate':
      return decideAttenuate(state, command);
    case 'revokeDelegation':
      return decideRevokeDelegation(state, command);
    case 'hop':
      return decideHop(state, command);
    case 'timeout':
      return decideTimeout(state, command);
    case 'resolveApproval':
      return decideResolveApproval(state, command);
  }
}
