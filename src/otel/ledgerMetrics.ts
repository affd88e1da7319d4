import type { Attributes, BatchObservableResult, Histogram, Meter, ObservableCounter, ObservableGauge } from '@opentelemetry/api';
import type { Ledger, Usage } from '../stream/types';
import { attr, metricNames } from './attributes';

/** One combination of a call's metric attributes (decision, outcome, reason, tool: closed sets, the tool once checked). */
interface Tally {
  readonly decision: string;
  readonly outcome: string;
  readonly reason: string | undefined;
  readonly tool: string | undefined;
  readonly attributes: Attributes;
  calls: number;
}

/**
 * The ledger's metrics: decisions (by decision, reason, outcome and, once checked, tool), call
 * duration, and budget use and limit per grant for the `grantsMax` grants most recently called
 * through the instrumented ledger (older ones drop out of the gauges, so a ledger with a million
 * grants still exports at most `grantsMax` × dimensions series).
 */
export class LedgerMetrics {
  private readonly decisions: ObservableCounter;
  /** Decisions counted here and observed at collection: one Map lookup per call instead of the SDK hashing an attribute set. */
  private readonly tallies = new Map<string, Tally>();
  private lastTally: Tally | undefined;
  private readonly duration: Histogram;
  private readonly used: ObservableGauge;
  private readonly limit: ObservableGauge;
  /** Grant ids, least recently called first. */
  private readonly recent = new Set<string>();
  /** The grant of the last call: already the most recent, nothing to move. */
  private lastGrant: string | undefined;
  private readonly observe = (observer: BatchObservableResult): void => this.observeAll(observer);

  constructor(private readonly meter: Meter, private readonly ledger: Ledger, private readonly grantsMax: number) {
    if (!Number.isSafeInteger(grantsMax) || grantsMax < 0) throw new TypeError('budgetGrantsMax must be a non-negative integer');
    this.decisions = meter.createObservableCounter(metricNames.decisions, { description: 'Tool calls decided by the ledger, by decision, reason and outcome', unit: '{call}' });
    this.duration = meter.createHistogram(metricNames.callDuration, { description: 'Time from invoke to its outcome (decision, tool run, settlement)', unit: 's' });
    this.used = meter.createObservableGauge(metricNames.budgetUsed, { description: 'Budget used by a grant (its own and its descendants\' calls, in-flight reservations included)', unit: '1' });
    this.limit = meter.createObservableGauge(metricNames.budgetLimit, { description: 'Budget limit of a grant', unit: '1' });
    meter.addBatchObservableCallback(this.observe, [this.decisions, this.used, this.limit]);
  }

  recordCall(decision: string, outcome: string, reason: string | undefined, tool: string | undefined, seconds: number, grantId: string | undefined): void {
    let tally = this.lastTally;
    // Most calls repeat the previous one's attributes: then no key string is built and nothing is looked up.
    if (tally === undefined || tally.decision !== decision || tally.outcome !== outcome || tally.reason !== reason || tally.tool !== tool) {
      const key = `${decision} ${outcome} ${reason ?? ''} ${tool ?? ''}`;
      tally = this.tallies.get(key);
      if (tally === undefined) {
        tally = { decision, outcome, reason, tool, attributes: attributesOf(decision, outcome, reason, tool), calls: 0 };
        this.tallies.set(key, tally);
      }
      this.lastTally = tally;
    }
    tally.calls++;
    this.duration.record(seconds, tally.attributes);
    if (grantId === undefined || this.grantsMax === 0 || grantId === this.lastGrant) return;
    this.lastGrant = grantId;
    this.recent.delete(grantId);
    this.recent.add(grantId);
    if (this.recent.size > this.grantsMax) {
      const oldest = this.recent.values().next();
      if (oldest.done !== true) this.recent.delete(oldest.value);
    }
  }

  close(): void {
    this.meter.removeBatchObservableCallback(this.observe, [this.decisions, this.used, this.limit]);
    this.recent.clear();
    this.lastGrant = undefined;
  }

  private observeAll(observer: BatchObservableResult): void {
    for (const tally of this.tallies.values()) observer.observe(this.decisions, tally.calls, tally.attributes);
    this.observeBudgets(observer);
  }

  private observeBudgets(observer: BatchObservableResult): void {
    for (const grantId of this.recent) {
      let usage: Usage;
      try {
        usage = this.ledger.usage(grantId);
      } catch {
        continue; // a closed ledger or a grant another process's log no longer shows: nothing to say
      }
      for (const [dimension, amount] of dimensionsOf(usage)) {
        const attributes = { [attr.grantId]: grantId, [attr.budgetDimension]: dimension };
        observer.observe(this.used, amount.used, attributes);
        observer.observe(this.limit, amount.limit, attributes);
      }
    }
  }
}

/** Calls, input bytes, each capped meter (`meter:<name>`, names the host chose) and the rate window. */
function* dimensionsOf(usage: Usage): Iterable<readonly [string, { readonly used: number; readonly limit: number }]> {
  yield ['calls', usage.calls];
  yield ['input_bytes', usage.inputBytes];
  for (const [name, amount] of Object.entries(usage.meters ?? {})) yield [`meter:${name}`, amount];
  if (usage.rate !== undefined) yield ['rate_window', { used: usage.rate.inWindow, limit: usage.rate.limit }];
}

function attributesOf(decision: string, outcome: string, reason: string | undefined, tool: string | undefined): Attributes {
  const attributes: Attributes = { [attr.decision]: decision, [attr.outcome]: outcome };
  if (reason !== undefined) attributes[attr.reason] = reason;
  if (tool !== undefined) attributes[attr.toolName] = tool;
  return attributes;
}
