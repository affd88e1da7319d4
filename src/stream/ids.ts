import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../domain/chain';
import { limits } from '../domain/limits';

/** A bearer token: 256 random bits, shown once to the host, stored only as its SHA-256 digest. */
export function newToken(): string {
  return `atc_${randomBytes(32).toString('base64url')}`;
}

export function tokenDigest(token: string): string {
  return sha256Hex(token);
}

/** The digest of a token an agent presented, or undefined (never hashed) when it cannot be a token: not a string, or longer than any issued one. */
export function presentedTokenDigest(token: unknown): string | undefined {
  return typeof token === 'string' && token.length <= limits.tokenCharsMax ? tokenDigest(token) : undefined;
}

/** An approval id: 128 random bits (an id that was never issued is refused, so ids cannot be guessed into use). */
export function newApprovalId(): string {
  return `a_${randomBytes(16).toString('hex')}`;
}

export function newGrantId(): string {
  return `g_${randomBytes(16).toString('hex')}`;
}

/**
 * Call ids: a random 64-bit prefix per ledger object and a counter, unique across processes sharing
 * a log. The counter is the call's ordinal in this ledger object (what heldOutcomes.ts looks up).
 */
export class CallIds {
  private readonly prefix = `c_${randomBytes(8).toString('hex')}_`;
  private counter = 0;

  /** The next call's ordinal (1, 2, …); `id(ordinal)` is its call id. */
  take(): number {
    return ++this.counter;
  }

  id(ordinal: number): string {
    return this.prefix + ordinal.toString(36);
  }

  /** The ordinal of a call id this source made, or undefined (another ledger object's, or not a call id). */
  ordinalOf(callId: string): number | undefined {
    if (!callId.startsWith(this.prefix)) return undefined;
    const ordinal = parseInt(callId.slice(this.prefix.length), 36);
    return Number.isSafeInteger(ordinal) && ordinal >= 1 && ordinal <= this.counter && this.id(ordinal) === callId ? ordinal : undefined;
  }
}

/** Names one ledger object in a settlement journal (docs/storage.md). */
export function newJournalOwner(): string {
  return randomBytes(8).toString('hex');
}
