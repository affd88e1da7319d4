import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { PendingSettlement, SettlementJournal } from '../stream/ports/settlementJournal';
import { meterAmountsProblem } from '../domain/meters';

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
