import { createLedger, type Ledger, type LedgerOptions } from '../../src';

/** A clock the test moves by hand. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; set: (t: number) => void; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, set: (v) => (t = v), advance: (ms) => (t += ms) };
}

export const noteSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, text: { type: 'string' } },
  required: ['path', 'text'],
} as const;

/** A ledger with an in-memory notes store and `notes.write` / `notes.read` tools. */
export async function notesLedger(options: LedgerOptions = {}): Promise<{ ledger: Ledger; notes: Map<string, string>; runs: string[] }> {
  const ledger = createLedger(options);
  const notes = new Map<string, string>();
  const runs: string[] = [];
  await ledger.registerTool<{ path: string; text: string }>({
    name: 'notes.write',
    inputSchema: noteSchema,
    resources: (args) => [`notes:/${args.path}`],
    run: (args) => {
      runs.push('notes.write');
      notes.set(args.path, args.text);
      return 'ok';
    },
  });
  await ledger.registerTool<{ path: string }>({
    name: 'notes.read',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    resources: (args) => [`notes:/${args.path}`],
    run: (args) => {
      runs.push('notes.read');
      return notes.get(args.path) ?? null;
    },
  });
  return { ledger, notes, runs };
}

/**
 * Timers driven by the test (a ledger's `setTimer` option): nothing fires until `fire()` runs what
 * is scheduled, and `delays` records what each timer asked for.
 */
export function manualTimers(): { setTimer: (callback: () => void, delayMs: number) => () => void; fire: () => number; readonly delays: number[]; pending: () => number } {
  let queue: { callback: () => void; cancelled: boolean }[] = [];
  const delays: number[] = [];
  return {
    delays,
    setTimer(callback, delayMs) {
      const entry = { callback, cancelled: false };
      queue.push(entry);
      delays.push(delayMs);
      return () => (entry.cancelled = true);
    },
    fire() {
      const due = queue.filter((e) => !e.cancelled);
      queue = [];
      for (const e of due) e.callback();
      return due.length;
    },
    pending: () => queue.filter((e) => !e.cancelled).length,
  };
}
