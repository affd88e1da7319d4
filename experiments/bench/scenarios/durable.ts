import type { BenchContext, ScenarioResult } from './types';
export async function durable(_ctx: BenchContext): Promise<ScenarioResult> {
  return { id: '?', title: 'durable', figures: {}, derived: {}, skipped: 'not written yet' };
}
