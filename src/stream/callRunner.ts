import type { EventOf, LedgerEvent } from '../domain/events';
import { bindingAt, keyStatus } from '../domain/idempotency';
import { limits } from '../domain/limits';
import { rejectMessage, type RejectReason } from '../domain/reasons';
import { LedgerError } from '../errors';
import type { ArgumentSnapshot } from '../tools/arguments';
import type { BatchLoop } from './batchLoop';
import type { BatchResult, InvokeRequest } from './batchRequest';
import type { CallDeadlines } from './callDeadlines';
import { timeoutError } from './callTimeouts';
import { HeldOutcomes } from './heldOutcomes';
import { onSignalAbort, signalAborted, signalReason } from './hostSignal';
import type { CallIds } from './ids';
import type { WaitEnd } from './approvalWaits';
import { LazyAbort } from './lazyAbort';
import type { CallHops, CheckedResources, RunningToolContext, ToolResources } from './ports/toolResources';
import type { Running, RunningCalls } from './runningCalls';
import { pendingSettlement, type Settlements } from './settlements';
import type { ToolRegistry } from './toolRegistry';
import type { InvokeOutcome, KeyedInvokeOutcome } from './types';

export interface CallRunnerParts {
  readonly loop: BatchLoop;
  readonly registry: ToolRegistry;
  readonly resources: ToolResources;
  readonly hops: CallHops;
  readonly running: RunningCalls;
  readonly deadlines: CallDeadlines;
  readonly settlements: Settlements;
  readonly callIds: CallIds;
  readonly refundOnError: boolean;
  /** Where a call that asked a person waits for its approval (approvalDesk.ts). */
  readonly approvals: { wait(requested: EventOf<'approval.requested'>): Promise<WaitEnd> };
}

/** What `execute` needs of an admission: a `call.admitted` event, or an approved wait. */
type Admitted = Pick<EventOf<'call.admitted'>, 'callId' | 'grantId' | 'tool' | 'reserved' | 'ancestors' | 'deadline' | 'idempotency'>;

/** The reason an invoke whose wait ended without approval is rejected with. */
const waitReasons = { denied: 'approval_denied', timed_out: 'approval_timeout', revoked: 'revoked', closed: 'ledger_unavailable' } as const;

/** What a decided invoke becomes: the tool run and settled, a replay answered, or a rejection mapped. */
export class CallRunner {
  /** Outcomes of keyed calls this ledger ran, for their retries (bounded: the oldest goes first). */
  private readonly heldOutcomes = new HeldOutcomes(limits.idempotentOutcomesHeldMax);
  /** Retries of keyed calls that wait here for a person, answered with the call's outcome once it has one. */
  private readonly waitRetries = new Map<string, ((outcome: InvokeOutcome<unknown>) => void)[]>();

  constructor(private readonly parts: CallRunnerParts) {}

  /** The agent's outcome of a batch result for its invoke request. */
  outcome<Result>(result: BatchResult, request: InvokeRequest, ordinal: number, args: ArgumentSnapshot, cancel: AbortSignal | undefined): Promise<KeyedInvokeOutcome<Result>> | KeyedInvokeOutcome<Result> {
    const callId = request.callId;
    if (result.kind !== 'decided') return rejected(callId, 'ledger_unavailable');
    const event = result.events[0];
    if (event?.type === 'call.replayed') return this.replayOutcome<Result>(event);
    if (event?.type === 'call.admitted') return this.execute<Result>(event, ordinal, args, request.checked, cancel);
    if (event?.type === 'approval.requested') return this.afterApproval<Result>(event, ordinal, args, request.checked, cancel);
    return rejectionOutcome(event, request);
  }

  /**
   * A retry the log answered with the first call: that call's outcome once it has one (waiting for it
   * while it runs or waits for a person here), from this ledger's memory; otherwise how the log says it
   * ended, without a value.
   */
  private async replayOutcome<Result>(replay: EventOf<'call.replayed'>): Promise<KeyedInvokeOutcome<Result>> {
    const firstCallId = replay.replayOf;
    const running = this.parts.running.get(firstCallId);
    const waiting = running === undefined ? this.waitRetries.get(firstCallId) : undefined;
    const ordinal = running === undefined && waiting === undefined ? this.parts.callIds.ordinalOf(firstCallId) : undefined;
    const held = ordinal === undefined ? undefined : this.heldOutcomes.get(ordinal);
    const later = running !== undefined ? (running.retries ??= []) : waiting;
    const outcome = (later !== undefined ? await new Promise<InvokeOutcome<unknown>>((resolve) => later.push(resolve)) : held) as KeyedInvokeOutcome<Result> | undefined;
    if (outcome !== undefined && (outcome.status === 'completed' || outcome.status === 'failed')) return { ...outcome, callId: firstCallId, replayed: true };
    // The binding the retry matched (the decision read it from this state).
    const state = this.parts.loop.current;
    const binding = bindingAt(state, replay.grantId, replay.idempotency.keyDigest);
    return { status: 'replayed', callId: firstCallId, replayed: true, settled: binding === undefined ? 'in_flight' : keyStatus(state, binding) };
  }

  /**
   * A call that waits for a person: runs once the log shows it approved (here or in another process),
   * as admitted at the approval; otherwise rejected with why the wait ended.
   */
  private async afterApproval<Result>(requested: EventOf<'approval.requested'>, ordinal: number, args: ArgumentSnapshot, checked: CheckedResources, cancel: AbortSignal | undefined): Promise<InvokeOutcome<Result>> {
    if (requested.idempotency === undefined) return this.waitThenRun<Result>(requested, ordinal, args, checked, cancel, -1);
    // A keyed wait bound its key: its outcome is held for retries, its slot taken now, in decision
    // order, and retries made while it waits here wait for that outcome too.
    const heldSlot = this.heldOutcomes.reserve(ordinal);
    const retries: ((outcome: InvokeOutcome<unknown>) => void)[] = [];
    this.waitRetries.set(requested.callId, retries);
    let outcome: InvokeOutcome<Result> = rejected(requested.callId, 'ledger_unavailable');
    try {
      outcome = await this.waitThenRun<Result>(requested, ordinal, args, checked, cancel, heldSlot);
      return outcome;
    } finally {
      this.waitRetries.delete(requested.callId);
      for (const retry of retries) retry(outcome);
    }
  }

  private async waitThenRun<Result>(requested: EventOf<'approval.requested'>, ordinal: number, args: ArgumentSnapshot, checked: CheckedResources, cancel: AbortSignal | undefined, heldSlot: number): Promise<InvokeOutcome<Result>> {
    const end = await this.parts.approvals.wait(requested);
    if (end.kind !== 'approved') return rejected(requested.callId, waitReasons[end.kind]);
    const { callId, grantId, tool, reserved, ancestors, idempotency } = requested;
    return this.execute<Result>({ callId, grantId, tool, reserved, ancestors, deadline: end.deadline, idempotency }, ordinal, args, checked, cancel, heldSlot);
  }

  /** Runs an admitted call's tool (racing its deadline, if any), settles it, and answers its retries. */
  private async execute<Result>(admitted: Admitted, ordinal: number, args: ArgumentSnapshot, checked: CheckedResources, cancel: AbortSignal | undefined, approvedSlot?: number): Promise<InvokeOutcome<Result>> {
    // In admission order (heldOutcomes.ts): taken before the tool runs (an approved call's, when it
    // started to wait), filled in when it has ended.
    const heldSlot = approvedSlot ?? (admitted.idempotency === undefined ? -1 : this.heldOutcomes.reserve(ordinal));
    const controller = new LazyAbort();
    const running: Running = { grantId: admitted.grantId, ancestors: admitted.ancestors, controller };
    this.parts.running.add(admitted.callId, running);
    // Only through the prototypes' functions: own properties on the host's signal are never called.
    const stopListening = onSignalAbort(cancel, () => controller.abort(signalReason(cancel)));
    const context = this.parts.resources.callContext(admitted.callId, admitted.grantId, controller, checked, this.parts.hops);
    const deadline = admitted.deadline;
    let outcome: InvokeOutcome<Result> | undefined;
    let timedOut: DOMException | undefined;
    if (deadline === undefined) outcome = await this.runTool<Result>(admitted, args, context, cancel);
    else {
      // The tool races its deadline: once the log says timed out, invoke answers and the tool's
      // late result is dropped (nothing settles it again).
      const timeout = new Promise<undefined>((resolve) => (running.timedOut = (error) => {
        timedOut = error;
        resolve(undefined);
      }));
      this.parts.deadlines.schedule(admitted.callId, deadline);
      outcome = await Promise.race([this.runTool<Result>(admitted, args, context, cancel), timeout]);
      if (outcome !== undefined) this.parts.deadlines.cancel(admitted.callId);
    }
    // The outcome is decided: a context the tool kept (or a tool still running after its timeout) acts no more.
    context.end();
    stopListening();
    if (outcome !== undefined) {
      const outcomeKind = outcome.status === 'completed' ? 'completed' : 'failed';
      const cancelled = outcomeKind === 'failed' && signalAborted(cancel);
      // Read once: a report made after the tool returned (a stray callback) does not change the settlement.
      const report = admitted.reserved.meters !== undefined ? context.reported : undefined;
      const landed = await this.parts.settlements.settle(pendingSettlement(admitted.callId, outcomeKind, this.parts.refundOnError, cancelled, report), deadline);
      // Closed before the store took it, and the journal could not keep it either: say so.
      if (!landed && !this.parts.settlements.journaled) outcome = { status: 'failed', callId: admitted.callId, error: new LedgerError('ledger_unavailable', 'the ledger closed before this call could be settled in the store or its journal') };
    }
    // Timed out first (this settlement was then refused, or became the timeout itself): the log decides.
    if (timedOut !== undefined || outcome === undefined) outcome = { status: 'failed', callId: admitted.callId, error: timedOut ?? timeoutError() };
    if (heldSlot >= 0) {
      this.heldOutcomes.hold(heldSlot, ordinal, outcome);
      if (running.retries !== undefined) for (const retry of running.retries) retry(outcome);
    }
    this.parts.running.remove(admitted.callId);
    return outcome;
  }

  private async runTool<Result>(admitted: Admitted, args: ArgumentSnapshot, context: RunningToolContext, cancel: AbortSignal | undefined): Promise<InvokeOutcome<Result>> {
    const attached = this.parts.registry.get(admitted.tool);
    try {
      if (attached === undefined || !args.ok) throw new LedgerError('ledger_unavailable', 'tool implementation missing');
      if (signalAborted(cancel)) throw signalReason(cancel);
      const value = (await attached.definition.run(args.value, context)) as Result;
      return { status: 'completed', callId: admitted.callId, value };
    } catch (error) {
      return { status: 'failed', callId: admitted.callId, error };
    }
  }
}

/** A call the log did not admit: its reason, with what the agent may learn (retry time, meter, argument problem). */
function rejectionOutcome(event: LedgerEvent | undefined, request: InvokeRequest): InvokeOutcome<never> {
  const callId = request.callId;
  if (event?.type !== 'call.rejected') return rejected(callId, 'ledger_unavailable');
  if (event.retryAfterMs !== undefined) return { status: 'rejected', callId, reason: event.reason, message: rejectMessage(event.reason), retryAfterMs: event.retryAfterMs };
  if (event.meter !== undefined) return { status: 'rejected', callId, reason: event.reason, message: rejectMessage(event.reason), meter: event.meter };
  // What failed in the arguments, for the agent only: the event keeps just the reason.
  const refusal = request.refusal;
  if (refusal !== undefined && refusal.reason === event.reason) return { status: 'rejected', callId, reason: event.reason, message: refusal.message };
  return rejected(callId, event.reason);
}

export function rejected(callId: string, reason: RejectReason): InvokeOutcome<never> {
  return { status: 'rejected', callId, reason, message: rejectMessage(reason) };
}
