import { context, metrics, SpanKind, SpanStatusCode, trace, type MeterProvider, type Span, type SpanOptions, type TracerProvider } from '@opentelemetry/api';
import type { Subscription } from 'rxjs';
import type { InvokeOptions, KeyedInvokeOptions, KeyedInvokeOutcome, Ledger } from '../stream/types';
import { attr, executeTool, instrumentName } from './attributes';
import { CallEventIndex, type CallEvents } from './callEvents';
import { LedgerMetrics } from './ledgerMetrics';
import { addApprovalEvents, pendingApprovalsGauge } from './approvalTelemetry';

export interface InstrumentLedgerOptions {
  /** Default: the global tracer provider (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider;
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
  /**
   * At most this many grants are reported by the budget gauges: the ones most recently called
   * through this ledger (a grant id is an attribute value, so this bounds the series). Default 100.
   */
  readonly budgetGrantsMax?: number;
}

/** What `instrumentLedger` returns: the same ledger, and a way to take the instrumentation off. */
export interface LedgerInstrumentation {
  readonly ledger: Ledger;
  /** Restores the ledger's own `invoke`, stops following its events and unregisters the gauges. */
  uninstrument(): void;
}

/** Calls whose events are held at once while their `invoke` runs (see CallEventIndex). */
const callsHeldMax = 10_000;

/** The same options for every span: the SDK copies what it keeps, so one frozen object serves all. */
const spanOptions: SpanOptions = Object.freeze({ kind: SpanKind.INTERNAL, attributes: Object.freeze({ [attr.operationName]: executeTool }) });

export type Invoke = (caller: string, tool: string, args: unknown, options?: InvokeOptions | KeyedInvokeOptions) => Promise<KeyedInvokeOutcome>;

/**
 * Instruments a ledger in place: every `invoke` gets a span `execute_tool <tool>` in the active
 * context, carrying the call's id, grant, decision, reason and the seq and hash of the event that
 * logged the decision (so a span can be checked against the log: `atc prove --seq`); a retry
 * answered by idempotency replay carries its own `call.replayed` event's. Rejections and failures
 * set the span's status to error. Never a token or an argument value: attributes come from the
 * logged events, which hold neither.
 */
export function instrumentLedger(ledger: Ledger, options: InstrumentLedgerOptions = {}): LedgerInstrumentation {
  const own = Object.getOwnPropertyDescriptor(ledger, 'invoke');
  const calls = instrumentCalls(ledger, ledger.invoke as Invoke, options);
  Object.defineProperty(ledger, 'invoke', { value: calls.invoke, configurable: true, writable: true, enumerable: false });
  return {
    ledger,
    uninstrument() {
      calls.close();
      if (own !== undefined) Object.defineProperty(ledger, 'invoke', own);
      else delete (ledger as { invoke?: unknown }).invoke;
    },
  };
}

/**
 * The instrumentation itself, around any function shaped like `invoke` whose first argument names
 * the caller (a token for `invoke`, a grant id for the gateway's `invokeAsGrant`): the wrapped
 * function, and `close` to stop following the ledger's events and unregister the gauges.
 */
export function instrumentCalls(ledger: Ledger, original: Invoke, options: InstrumentLedgerOptions): { readonly invoke: Invoke; close(): void } {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(instrumentName);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(instrumentName);
  const ledgerMetrics = new LedgerMetrics(meter, ledger, options.budgetGrantsMax ?? 100);
  const index = new CallEventIndex(callsHeldMax);
  const removeApprovalsGauge = pendingApprovalsGauge(meter, ledger);
  const subscription: Subscription = ledger.events$.subscribe({ next: (event) => index.record(event) });

  const settle = (span: Span, started: number, outcome: KeyedInvokeOutcome | undefined): void => {
    const events = index.end(outcome?.callId, outcome !== undefined && outcome.status !== 'rejected' && outcome.replayed === true);
    const decided = outcome === undefined ? 'error' : decisionOf(outcome, events?.decision?.type);
    // A span the sampler dropped records nothing: only the metrics are worth the work then.
    if (span.isRecording()) finishSpan(span, outcome, events, decided);
    else span.end();
    const reason = outcome?.status === 'rejected' ? outcome.reason : undefined;
    ledgerMetrics.recordCall(decided, outcome?.status ?? 'error', reason, checkedTool(events, reason), (performance.now() - started) / 1000, events?.decision?.grantId);
  };

  // Not an async function: one `then` instead of an async frame and its awaits (each a promise the
  // context manager's hook also sees), and no per-call closure to run the original in the span's context.
  const invoke: Invoke = (token, tool, args, invokeOptions) => {
    const started = performance.now();
    // The name is final once the log has the tool's name as it recorded it; until then, the operation.
    const span = tracer.startSpan(executeTool, spanOptions);
    index.begin();
    let pending: Promise<KeyedInvokeOutcome>;
    try {
      pending = context.with(trace.setSpan(context.active(), span), original, ledger, token, tool, args, invokeOptions);
    } catch (error) {
      settle(span, started, undefined);
      throw error;
    }
    return pending.then(
      (outcome) => {
        settle(span, started, outcome);
        return outcome;
      },
      (error: unknown) => {
        settle(span, started, undefined);
        throw error;
      },
    );
  };
  return {
    invoke,
    close() {
      subscription.unsubscribe();
      ledgerMetrics.close();
      removeApprovalsGauge();
    },
  };
}

/** Span names by tool, so that a call does not build its name again (bounded: cleared when full). */
const spanNames = new Map<string, string>();
const spanNamesMax = 1_024;

function spanName(tool: string): string {
  let name = spanNames.get(tool);
  if (name === undefined) {
    if (spanNames.size >= spanNamesMax) spanNames.clear();
    name = `${executeTool} ${tool}`;
    spanNames.set(tool, name);
  }
  return name;
}

/** Sets what the log said on the span, one attribute at a time (no attributes object per call), and ends it. */
function finishSpan(span: Span, outcome: KeyedInvokeOutcome | undefined, events: CallEvents | undefined, decided: string): void {
  if (outcome === undefined) {
    // invoke never throws for a decision; reaching here means the host's own code threw.
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute(attr.errorType, 'exception');
    span.end();
    return;
  }
  const decision = events?.decision;
  const settlement = events?.settlement;
  addApprovalEvents(span, events?.approval);
  // A call that waited for a person was decided by its request (then admitted by its approval).
  const asked = events?.approval?.requested;
  span.setAttribute(attr.toolCallId, outcome.callId).setAttribute(attr.decision, decided).setAttribute(attr.outcome, outcome.status);
  if (decision !== undefined) {
    span.updateName(spanName(decision.tool));
    span.setAttribute(attr.toolName, decision.tool);
    if (decision.grantId !== undefined) span.setAttribute(attr.grantId, decision.grantId);
    span.setAttribute(attr.eventSeq, decision.seq).setAttribute(attr.eventHash, decision.hash);
  } else if (asked !== undefined) {
    span.updateName(spanName(asked.tool));
    span.setAttribute(attr.toolName, asked.tool).setAttribute(attr.grantId, asked.grantId);
    span.setAttribute(attr.eventSeq, asked.seq).setAttribute(attr.eventHash, asked.hash);
  }
  if (settlement !== undefined) span.setAttribute(attr.settlementSeq, settlement.seq).setAttribute(attr.settlementHash, settlement.hash);
  if (outcome.status === 'rejected') {
    span.setAttribute(attr.reason, outcome.reason).setAttribute(attr.errorType, outcome.reason);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
  } else if (outcome.status === 'failed') {
    const reason = settlement?.type === 'call.failed' && settlement.timedOut === true ? 'timed_out' : settlement?.type === 'call.failed' && settlement.cancelled === true ? 'cancelled' : 'tool_error';
    span.setAttribute(attr.errorType, reason);
    // The error's message may quote what the tool saw; only its kind goes in the span.
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  span.end();
}

function decisionOf(outcome: KeyedInvokeOutcome, logged: string | undefined): string {
  if (outcome.status === 'rejected') return 'rejected';
  if (outcome.replayed === true || logged === 'call.replayed') return 'replayed';
  return 'admitted';
}

/**
 * The tool a call's metrics name: only once the ledger has checked it is a registered tool (an agent
 * chooses the name it sends, and the reasons before `tool_not_granted` are decided before the name is
 * looked up). The name as the log recorded it.
 */
function checkedTool(events: CallEvents | undefined, reason: string | undefined): string | undefined {
  const tool = events?.decision?.tool;
  return tool !== undefined && !(reason !== undefined && uncheckedToolReasons.has(reason)) ? tool : undefined;
}

const uncheckedToolReasons = new Set<string>(['unknown_token', 'revoked', 'not_yet_valid', 'expired', 'unknown_tool', 'ledger_unavailable']);
