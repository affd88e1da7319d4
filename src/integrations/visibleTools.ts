import type { Ledger } from '../stream/types';

/** The names of the tools this token may call now (for `tools/list` and the AI SDK tool set); never throws. */
export function visibleToolNames(ledger: Ledger, token: string): readonly string[] {
  try {
    return ledger.visibleTools(token).map((t) => t.name);
  } catch {
    return [];
  }
}
