import type { BenchContext, ScenarioResult } from './types';
export async function crossProcess(_ctx: BenchContext): Promise<ScenarioResult> {
  return { id: '?', title: 'crossProcess', figures: {}, derived: {}, skipped: 'not written yet' };
}
