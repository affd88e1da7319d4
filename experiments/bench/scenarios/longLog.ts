import type { BenchContext, ScenarioResult } from './types';
export async function longLog(_ctx: BenchContext): Promise<ScenarioResult> {
  return { id: '?', title: 'longLog', figures: {}, derived: {}, skipped: 'not written yet' };
}
