import { createLedger, type EventStore, type Ledger, type LedgerOptions, type PendingApprovalView } from '../../src';
import { manualClock, manualTimers } from './fixtures';

export { manualTimers };

export const hour = 3_600_000;

/** Lets the stream's promise chains run (no timers involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 30; i++) await Promise.resolve();
}

export const paySchema = {
  type: 'object',
  properties: { to: { type: 'string' }, amount: { type: 'number' } },
  required: ['to', 'amount'],
  additionalProperties: false,
} as const;

/** Payments over 100 need a person. */
export const over100 = { properties: { amount: { exclusiveMinimum: 100 } } };

const opened: Ledger[] = [];

/** Closes every ledger `paymentsLedger` opened (a waiting invoke keeps the process alive until then). */
export async function closeLedgers(): Promise<void> {
  await Promise.all(opened.splice(0).map((l) => l.close()));
}

/** A ledger with a `pay` tool that records what ran, an injected clock and manual timers. */
export async function paymentsLedger(options: Partial<LedgerOptions> & { store?: EventStore } = {}) {
  const clock = manualClock();
  const timers = manualTimers();
  const ledger: Ledger = createLedger({ clock: clock.now, setTimer: timers.setTimer, ...options });
  opened.push(ledger);
  const paid: number[] = [];
  await ledger.registerTool({ name: 'pay', inputSchema: paySchema, run: async (args: { to: string; amount: number }) => { paid.push(args.amount); return `paid ${args.amount}`; } });
  await ledger.registerTool({ name: 'balance', inputSchema: { type: 'object' }, run: async () => 42 });
  return { ledger, clock, timers, paid };
}

/** Waits until the ledger lists `n` pending approvals (the invoke's decision has been committed). */
export async function pendingOf(ledger: Ledger, n = 1): Promise<readonly PendingApprovalView[]> {
  for (let i = 0; i < 200; i++) {
    const pending = ledger.pendingApprovals();
    if (pending.length >= n) return pending;
    await settle();
  }
  // An asynchronous store (PostgreSQL) commits on I/O: wait for the condition, bounded.
  for (let i = 0; i < 1_000; i++) {
    const pending = ledger.pendingApprovals();
    if (pending.length >= n) return pending;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`expected ${n} pending approvals, found ${ledger.pendingApprovals().length}`);
}
