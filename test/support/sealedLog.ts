import { eventHash } from '../../src/domain/chain';
import { genesisHash, type LedgerEvent } from '../../src/domain/events';

/**
 * Re-seals events from index `from` on (seq, prevHash and hash), as a forger who can rewrite the
 * whole file would: the chain is then valid, so only the re-decided rules can catch the edit.
 */
export function reseal(events: readonly LedgerEvent[], from = 0): LedgerEvent[] {
  const out = events.slice();
  for (let i = from; i < out.length; i++) {
    const prevHash = i === 0 ? genesisHash : (out[i - 1] as LedgerEvent).hash;
    const base = { ...(out[i] as LedgerEvent), seq: i + 1, prevHash };
    out[i] = { ...base, hash: eventHash(base) } as LedgerEvent;
  }
  return out;
}

/** Re-hashes one event in place of the original, leaving seq and prevHash as edited. */
export function rehash(event: LedgerEvent): LedgerEvent {
  return { ...event, hash: eventHash(event) } as LedgerEvent;
}
