import { shardGet, shardValues } from './shardedMap';
import type { GrantRecord, InFlightCall, LedgerState } from './state';

// Plain reads of a LedgerState for hosts and tests: the maps inside it are a performance detail
// (shardedMap.ts) that the root entry does not export, so their layout can change freely.

export function grantOf(state: LedgerState, grantId: string): GrantRecord | undefined {
  return shardGet(state.grants, grantId);
}

/** Every grant, in no particular order. */
export function grantsOf(state: LedgerState): IterableIterator<GrantRecord> {
  return shardValues(state.grants);
}

/** The grant a token digest (sha256 hex of the token) belongs to. */
export function grantIdOfToken(state: LedgerState, tokenDigest: string): string | undefined {
  return shardGet(state.tokens, tokenDigest);
}

export function inFlightCallOf(state: LedgerState, callId: string): InFlightCall | undefined {
  return shardGet(state.inFlight, callId);
}

/** Every call admitted and not yet settled, in no particular order. */
export function inFlightCallsOf(state: LedgerState): IterableIterator<InFlightCall> {
  return shardValues(state.inFlight);
}
