import { createLedger, type InvokeOutcome, type LedgerEvent, type ToolContext } from '../../src';
import type { RevocationRecord } from '../../src/evidence/types';
import { NotesStore } from './notesStore';
import { registerNotesTools } from './notesTools';

export interface RevocationRun {
  readonly record: RevocationRecord;
  readonly log: readonly LedgerEvent[];
}

interface Deferred {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Revocation during execution, ordered by events only: call A is admitted and blocks inside its tool
 * (the tool resolves `entered` and waits on `release`); the host revokes the grant; A then finishes
 * (released by the test, or aborted through its signal when `abortInFlight`); call B is rejected.
 */
export async function runRevocation(abortInFlight: boolean): Promise<RevocationRun> {
  const ledger = createLedger();
  const store = new NotesStore({ 'drafts/argv-seed': 'argv-seed-text' });
  const entered = deferred();
  const release = deferred();
  let abortObserved = false;
  await registerNotesTools(ledger, store, {
    beforeEffect: (_tool, ctx: ToolContext) => {
      entered.resolve();
      return new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          abortObserved = true;
          reject(ctx.signal.reason);
        };
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
        void release.promise.then(resolve);
      });
    },
  });
  const { grantId, token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 3_600_000, budget: { calls: 5, inputBytes: 4_096 } });
  const digestBefore = store.digest();

  const first = ledger.invoke(token, 'notes.write', { path: 'drafts/argv-blocked', text: 'argv-a' });
  await entered.promise;
  await ledger.revoke(grantId, { abortInFlight });
  if (!abortInFlight) release.resolve();
  const a = await first;
  const b: InvokeOutcome = await ledger.invoke(token, 'notes.write', { path: 'drafts/argv-later', text: 'argv-b' });
  release.resolve(); // nothing waits on it any more; leaves no pending promise behind
  await ledger.close();
  const log = ledger.events();

  if (a.status === 'rejected') throw new Error(`revocation run: the first call was rejected (${a.reason}) instead of admitted`);
  const steps = log.filter(
    (e) =>
      e.type === 'grant.revoked' ||
      ((e.type === 'call.admitted' || e.type === 'call.completed' || e.type === 'call.failed') && e.callId === a.callId) ||
      (e.type === 'call.rejected' && e.callId === b.callId),
  );
  const record: RevocationRecord = {
    description: abortInFlight
      ? 'a call blocks inside its tool; the grant is revoked with abortInFlight; the tool sees its signal aborted and the call fails; a later call is rejected'
      : 'a call blocks inside its tool; the grant is revoked; the call is released and completes; a later call is rejected',
    grantId,
    abortInFlight,
    admittedCallId: a.callId,
    admittedStatus: a.status,
    abortObserved,
    laterCallId: b.callId,
    laterOutcome: b.status === 'rejected' ? 'rejected' : 'admitted',
    ...(b.status === 'rejected' ? { laterReason: b.reason } : {}),
    order: steps.map((e) => e.type),
    store: { digestBefore, digestAfter: store.digest() },
    effectCallIds: store.effects.map((e) => e.callId),
  };
  return { record, log };
}
