import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { MeterAmounts } from '../domain/events';
import { meterAmountsProblem } from '../domain/meters';

/** A settlement the store could not take yet: only ids and the outcome, never a value. */
export interface PendingSettlement {
  readonly callId: string;
  readonly outcome: 'completed' | 'failed';
  readonly refund: boolean;
  /** The caller cancelled the call (logged as `cancelled: true` on its `call.failed`). */
  readonly cancelled?: boolean;
  /** The tool's `ctx.report` (meter names and amounts, never a value of the call). */
  readonly report?: MeterAmounts;
}

/**
 * Where a ledger keeps the settlements its store refused, outside the log, so that the next open
 * (after `close`, or after a crash when the journal is on disk) appends them. Each ledger object is
 * one `owner` and replaces its whole list on every change. Taking over another owner's entries is
 * safe: a settlement lands once, a second attempt is refused (`unknown_call`) and dropped.
 */
export interface SettlementJournal {
  /** Replaces what `owner` keeps; an empty list forgets the owner. May throw (then the ledger keeps retrying in memory). */
  keep(owner: string, pending: readonly PendingSettlement[]): void;
  /** What every owner keeps now. Never throws: an unreadable entry is skipped. */
  kept(): readonly { readonly owner: string; readonly pending: readonly PendingSettlement[] }[];
}

/** A store that brings its own journal (the SQLite store: files next to the database). */
export interface JournaledStore {
  readonly settlements: SettlementJournal;
}

export function storeJournal(store: object): SettlementJournal | undefined {
  const journal = (store as Partial<JournaledStore>).settlements;
  return journal !== undefined && typeof journal.keep === 'function' && typeof journal.kept === 'function' ? journal : undefined;
}

/** A journal in this process's memory: survives `close` and a reopen on the same store object, not a crash. */
export function memoryJournal(): SettlementJournal {
  const owners = new Map<string, readonly PendingSettlement[]>();
  return {
    keep(owner, pending) {
      if (pending.length === 0) owners.delete(owner);
      else owners.set(owner, Object.freeze([...pending]));
    },
    kept: () => Array.from(owners, ([owner, pending]) => ({ owner, pending })),
  };
}

const ownerPattern = /^[0-9a-f]{16}$/;
const entriesMax = 1_000_000;

function isPending(value: unknown): value is PendingSettlement {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.callId === 'string' && v.callId.length <= 256 && (v.outcome === 'completed' || v.outcome === 'failed') && typeof v.refund === 'boolean' && (v.cancelled === undefined || typeof v.cancelled === 'boolean') && (v.report === undefined || meterAmountsProblem(v.report, 'report') === undefined);
}

/**
 * A journal of one file per owner in `dir` (`<owner>.json`, written to a temporary name and renamed,
 * so a reader sees a whole list or the previous one). Survives a crash of the writing process.
 */
export function fileJournal(dir: string): SettlementJournal {
  return {
    keep(owner, pending) {
      if (!ownerPattern.test(owner)) throw new TypeError('journal owner must be 16 hex digits');
      const file = nodePath.join(dir, `${owner}.json`);
      if (pending.length === 0) {
        rmSync(file, { force: true });
        return;
      }
      mkdirSync(dir, { recursive: true });
      const temporary = `${file}.tmp`;
      writeFileSync(temporary, JSON.stringify(pending.map(({ callId, outcome, refund, cancelled, report }) => ({ callId, outcome, refund, ...(cancelled === true ? { cancelled } : {}), ...(report !== undefined ? { report } : {}) }))));
      renameSync(temporary, file);
    },
    kept() {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      const out: { owner: string; pending: PendingSettlement[] }[] = [];
      for (const name of names) {
        const owner = name.endsWith('.json') ? name.slice(0, -5) : '';
        if (!ownerPattern.test(owner)) continue;
        try {
          const parsed: unknown = JSON.parse(readFileSync(nodePath.join(dir, name), 'utf8'));
          if (Array.isArray(parsed) && parsed.length <= entriesMax) out.push({ owner, pending: parsed.filter(isPending) });
        } catch {
          // Unreadable: skipped (the calls stay in flight, as after a crash without a journal).
        }
      }
      return out;
    },
  };
}
