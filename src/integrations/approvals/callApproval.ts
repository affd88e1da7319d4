import type { EventOf } from '../../domain/events';
import { approvalArgsDigest } from '../../stream/approvalAsk';
import type { LedgerApprovals } from '../../stream/approvalTypes';
import { snapshotArguments } from '../../tools/arguments';

export type ApprovalRequested = EventOf<'approval.requested'>;

/** Which call to watch for: the grant it runs under, its tool and the arguments it was invoked with. */
export interface WatchedCall {
  readonly grantId: string;
  readonly tool: string;
  readonly args: unknown;
}

// Approval ids already claimed by a watcher, per ledger: two waiting calls with the same tool and
// arguments on one grant each take a different request, never the same one twice.
const claimedByLedger = new WeakMap<object, Set<string>>();

/**
 * Calls `onRequested` once with the `approval.requested` event of the call about to be invoked, so a
 * surface can ask a person about it. `invoke` does not return the approval id while it waits, so the
 * event is recognised by grant, tool and `argsDigest`: the digest is salted by the approval id, and
 * recomputing it from these arguments proves the request is about exactly them. Subscribe before
 * invoking; the returned function stops watching (call it when the invoke settles).
 */
export function watchCallApproval(ledger: LedgerApprovals, call: WatchedCall, onRequested: (event: ApprovalRequested) => void): () => void {
  const snapshot = snapshotArguments(call.args);
  if (!snapshot.ok) return () => undefined; // the ledger rejects such arguments before asking anyone
  const claimed = claimedByLedger.get(ledger) ?? new Set<string>();
  claimedByLedger.set(ledger, claimed);
  let mine: string | undefined;
  const subscription = ledger.approvals$.subscribe((event) => {
    if (event.type !== 'approval.requested' || mine !== undefined) return;
    if (event.grantId !== call.grantId || event.tool !== call.tool || claimed.has(event.approvalId)) return;
    if (approvalArgsDigest(event.approvalId, call.tool, snapshot.canonical) !== event.argsDigest) return;
    mine = event.approvalId;
    claimed.add(mine);
    subscription.unsubscribe();
    onRequested(event);
  });
  return () => {
    subscription.unsubscribe();
    if (mine !== undefined) claimed.delete(mine);
  };
}
