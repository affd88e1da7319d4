import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/** Scenario 7: heap per live grant and per in-memory event, measured in a child with --expose-gc. */
export async function memory(ctx: BenchContext): Promise<ScenarioResult> {
  const grants = ctx.quick ? 10_000 : 100_000;
  const calls = ctx.quick ? 20_000 : 100_000;
  const child = path.join(__dirname, '..', 'memoryChild.js');
  const out = execFileSync(process.execPath, ['--expose-gc', child, String(grants), String(calls)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const r = JSON.parse(out.trim().split('\n').pop() as string) as { bytesPerGrant: number; bytesPerEvent: number; events: number };
  return {
    id: '7',
    title: 'Memory: heap per live grant and per in-memory event',
    figures: {},
    derived: {
      grants,
      calls,
      bytesPerLiveGrant: round(r.bytesPerGrant),
      bytesPerInMemoryEvent: round(r.bytesPerEvent),
    },
    notes: [
      'Per grant: state record, token index entry and its grant.issued event in the in-memory log. The bench issues one policy to every grant, so their tools, args, resources and budget are one shared value (src/stream/scopeInterner.ts); grants with distinct scopes each hold their own.',
      'Per event: the frozen event object in the in-memory log (the state does not grow once calls settle).',
    ],
  };
}
