import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes, type MeterProvider, type Span, type TracerProvider } from '@opentelemetry/api';
import type { Subscription } from 'rxjs';
import type { InvokeOptions, KeyedInvokeOptions, KeyedInvokeOutcome, Ledger } from '../stream/types';
import { attr, executeTool, instrumentName } from './attributes';
import { CallEventIndex, type CallEvents } from './callEvents';
import { LedgerMetrics, type CallMetricAttributes } from './ledgerMetrics';

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

/**
 * Instruments a ledger in place: every `invoke` gets a span `execute_tool <tool>` in the active
 * context, carrying the call's id, grant, decision, reason and the seq and hash of the event that
 * logged the decision (so a span can be checked against the log: `atc prove --seq`). Rejections and
 * failures set the span's status to error. Never a token or an argument value: attributes come
 * from the logged events, which hold neither.
 */
export function instrumentLedger(ledger: Ledger, options: InstrumentLedgerOptions = {}): LedgerInstrumentation {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(instrumentName);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(instrumentName);
  const ledgerMetrics = new LedgerMetrics(meter, ledger, options.budgetGrantsMax ?? 100);
  const index = new CallEventIndex(callsHeldMax);
  const subscription: Subscription = ledger.events$.subscribe({ next: (event) => index.record(event) });
  const own = Object.getOwnPropertyDescriptor(ledger, 'invoke');
  const original = ledger.invoke.bind(ledger) as (token: string, tool: string, args: unknown, options?: InvokeOptions | KeyedInvokeOptions) => Promise<KeyedInvokeOutcome>;

  const invoke = async (token: string, tool: string, args: unknown, invokeOptions?: InvokeOptions | KeyedInvokeOptions): Promise<KeyedInvokeOutcome> => {
    const started = performance.now();
    // The name is final once the log has the tool's name as it recorded it; until then, the operation.
    const span = tracer.startSpan(executeTool, { kind: SpanKind.INTERNAL, attributes: { [attr.operationName]: executeTool } });
    index.begin();
    let outcome: KeyedInvokeOutcome | undefined;
    try {
      outcome = await context.with(trace.setSpan(context.active(), span), () => original(token, tool, args, invokeOptions));
      return outcome;
    } finally {
      const events = index.end(outcome?.callId);
      const attributes = finishSpan(span, outcome, events);
      ledgerMetrics.recordCall(attributes, (performance.now() - started) / 1000, events?.decision?.grantId);
    }
  };
  Object.defineProperty(ledger, 'invoke', { value: invoke, configurable: true, writable: true, enumerable: false });

  return {
    ledger,
    uninstrument() {
      subscription.unsubscribe();
      ledgerMetrics.close();
      if (own !== undefined) Object.defineProperty(ledger, 'invoke', own);
      else delete (ledger as { invoke?: unknown }).invoke;
    },
  };
}

/** Sets what the log said on the span (one attributes object: one validation pass), ends it, and returns the metric attributes. */
function finishSpan(span: Span, outcome: KeyedInvokeOutcome | undefined, events: CallEvents | undefined): CallMetricAttributes {
  if (outcome === undefined) {
    // invoke never throws for a decision; reaching here means the host's own code threw.
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute(attr.errorType, 'exception');
    span.end();
    return { decision: 'error', outcome: 'error' };
  }
  const decision = events?.decision;
  const settlement = events?.settlement;
  const tool = decision?.tool;
  const decided = decisionOf(outcome, decision?.type);
  const attributes: Attributes = { [attr.toolCallId]: outcome.callId, [attr.decision]: decided, [attr.outcome]: outcome.status };
  if (tool !== undefined) {
    span.updateName(`${executeTool} ${tool}`);
    attributes[attr.toolName] = tool;
  }
  if (decision !== undefined) {
    if (decision.grantId !== undefined) attributes[attr.grantId] = decision.grantId;
    attributes[attr.eventSeq] = decision.seq;
    attributes[attr.eventHash] = decision.hash;
  }
  if (settlement !== undefined) {
    attributes[attr.settlementSeq] = settlement.seq;
    attributes[attr.settlementHash] = settlement.hash;
  }
  if (outcome.status === 'rejected') {
    attributes[attr.reason] = outcome.reason;
    attributes[attr.errorType] = outcome.reason;
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
  } else if (outcome.status === 'failed') {
    const reason = settlement?.type === 'call.failed' && settlement.timedOut === true ? 'timed_out' : settlement?.type === 'call.failed' && settlement.cancelled === true ? 'cancelled' : 'tool_error';
    attributes[attr.errorType] = reason;
    // The error's message may quote what the tool saw; only its kind goes in the span.
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  span.setAttributes(attributes);
  span.end();
  return metricAttributes(outcome, decided, tool);
}

function decisionOf(outcome: KeyedInvokeOutcome, logged: string | undefined): string {
  if (outcome.status === 'rejected') return 'rejected';
  if (outcome.replayed === true || logged === 'call.replayed') return 'replayed';
  return 'admitted';
}

/**
 * The attributes of a call's metrics: decision, reason and outcome (closed sets), and the tool's
 * name only once the ledger has checked it is a registered tool (an agent chooses the name it sends,
 * and the reasons before `tool_not_granted` are decided before the name is looked up).
 */
function metricAttributes(outcome: KeyedInvokeOutcome, decision: string, tool: string | undefined): CallMetricAttributes {
  const reason = outcome.status === 'rejected' ? outcome.reason : undefined;
  const checkedTool = tool !== undefined && !(reason !== undefined && uncheckedToolReasons.has(reason)) ? tool : undefined;
  return { decision, outcome: outcome.status, ...(reason !== undefined ? { reason } : {}), ...(checkedTool !== undefined ? { tool: checkedTool } : {}) };
}

const uncheckedToolReasons = new Set<string>(['unknown_token', 'revoked', 'not_yet_valid', 'expired', 'unknown_tool', 'ledger_unavailable']);
