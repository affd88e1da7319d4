import { sealEvent } from '../domain/chain';
import { decide } from '../domain/decide';
import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import { TransientState } from '../domain/transientState';
import { admitCommand } from './admitCommand';
import type { BatchResult, Request } from './batchRequest';
import type { LiveState } from './liveState';
import type { ToolResources } from './ports/toolResources';
import { readClock } from './readClock';
import type { ToolRegistry } from './toolRegistry';

/** A decided batch: the state after it, the events to append, one result per request. */
export interface BatchDecided {
  readonly state: LedgerState;
  readonly sealed: LedgerEvent[];
  readonly results: BatchResult[];
}

/** What deciding needs besides the state: the clock, this ledger's tools and the resource checker. */
export interface BatchDecider {
  readonly clock: () => number;
  readonly registry: ToolRegistry;
  readonly resources: ToolResources;
  /** The ledger's default wait for an approval (ms of log time). */
  readonly approvalDefaultMs: number;
}

/**
 * The one decide path of both commit strategies: each request is dated, decided against the working
 * state, and its events sealed and folded in before the next request is decided.
 */
export function decideBatch(decider: BatchDecider, start: LedgerState, live: LiveState | undefined, batch: readonly Request[]): BatchDecided {
  // Batch-local fold: each trie path is copied once per batch, not once per event; `start` stays
  // untouched. With `live`, the fold kept open across batches (`start` is its view; a failed append
  // rolls it back).
  const transient: Pick<TransientState, 'view' | 'apply'> = live ?? new TransientState(start);
  const sealed: LedgerEvent[] = [];
  const results: BatchResult[] = [];
  for (const request of batch) {
    if (request.kind === 'catchUp') {
      results.push({ kind: 'decided', events: [] });
      continue;
    }
    const state = transient.view;
    const at = readClock(decider.clock);
    if (at === undefined) {
      // A clock that throws or reads no finite number cannot date an event: fail this command closed.
      results.push({ kind: 'unavailable', cause: 'the clock did not return a finite number' });
      continue;
    }
    const command = request.kind === 'host' ? request.command(at, state) : admitCommand(decider.registry, state, request, at, (checked) => (request.checked = checked), (refusal) => (request.refusal = refusal), decider.resources, decider.approvalDefaultMs);
    if (command === undefined) {
      // The log knows the tool but this ledger object has no implementation to check or run:
      // a host misconfiguration, not an agent decision, so fail closed without logging a verdict.
      results.push({ kind: 'unavailable', cause: 'tool not attached to this ledger' });
      continue;
    }
    const decision = decide(state, command);
    if (!decision.ok) {
      results.push({ kind: 'refused', decision });
      continue;
    }
    const events: LedgerEvent[] = [];
    for (const payload of decision.events) {
      const event = sealEvent(payload, at, transient.view.head);
      transient.apply(event);
      events.push(event);
      sealed.push(event);
    }
    results.push({ kind: 'decided', events });
  }
  return { state: transient instanceof TransientState ? transient.commit() : transient.view, sealed, results };
}
