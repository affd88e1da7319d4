import { canonicalJsonWithout } from '../../domain/canonicalJson';
import { genesisHash } from '../../domain/events';
import type { ReceivedEvent } from './logLines';

/** SHA-256 of a text's UTF-8 bytes, as 64 lower-case hex digits (WebCrypto in the page). */
export type Sha256Hex = (text: string) => Promise<string>;

export interface IntegrityProblem {
  readonly seq: number;
  readonly problem: string;
}

export interface IntegrityStatus {
  /** Every event up to this seq is chained and hashes to its `hash`. */
  readonly verifiedThrough: number;
  /** The first event that does not; nothing after it counts as verified. */
  readonly firstBad: IntegrityProblem | undefined;
  /** The `hash` of each verified event, in order (the Merkle leaves, for a checkpoint). */
  readonly hashes: readonly string[];
}

const hex64 = /^[0-9a-f]{64}$/;

/** A parsed event or the reason it cannot be one; the page folds only what parses. */
export type Parsed = { readonly event: Record<string, unknown> } | { readonly problem: string };

export function parseEvent(received: ReceivedEvent): Parsed {
  if (received.text === undefined) return { problem: 'the server withheld this event (its stored body is too large or not text)' };
  let value: unknown;
  try {
    value = JSON.parse(received.text);
  } catch {
    return { problem: 'the stored body is not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'the stored body is not a JSON object' };
  return { event: value as Record<string, unknown> };
}

/**
 * Re-checks the hash chain as events arrive, independently of the server: each event's `seq` is
 * the next one, its `prevHash` is the previous `hash`, and its `hash` is the SHA-256 of its RFC 8785
 * canonical JSON without `hash`. Batches are hashed concurrently and judged in order.
 */
export class ChainVerifier {
  private nextSeq = 1;
  private prevHash = genesisHash;
  private bad: IntegrityProblem | undefined;
  private readonly verified: string[] = [];

  constructor(private readonly sha256: Sha256Hex) {}

  status(): IntegrityStatus {
    return { verifiedThrough: this.nextSeq - 1, firstBad: this.bad, hashes: this.verified };
  }

  async push(batch: readonly { readonly received: ReceivedEvent; readonly parsed: Parsed }[]): Promise<IntegrityStatus> {
    if (this.bad !== undefined) return this.status();
    const texts = batch.map(({ parsed }) => ('event' in parsed ? canonicalTextOrUndefined(parsed.event) : undefined));
    const digests = await Promise.all(texts.map((text) => (text === undefined ? undefined : this.sha256(text))));
    for (let i = 0; i < batch.length && this.bad === undefined; i++) {
      const { received, parsed } = batch[i] as (typeof batch)[number];
      const problem = this.check(received, parsed, digests[i]);
      if (problem !== undefined) {
        this.bad = { seq: this.nextSeq, problem };
        break;
      }
      const hash = (parsed as { event: Record<string, unknown> }).event.hash as string;
      this.verified.push(hash);
      this.prevHash = hash;
      this.nextSeq++;
    }
    return this.status();
  }

  /**
   * Re-checks events this verifier verified before against what the log holds now: `rows` is the
   * log's page after seq `after`, as the server sends it (fewer than `pageMax` rows: the log ends
   * there). An event whose stored body changed since (it no longer hashes to the hash verified, or
   * carries another one), or that is gone, becomes the first bad seq unless an earlier one already
   * is; nothing from it on counts as verified any more. Only already-verified seqs are judged here.
   */
  async recheck(after: number, rows: readonly ReceivedEvent[], pageMax: number): Promise<IntegrityStatus> {
    const through = this.verified.length;
    const parsed = rows.map((row) => (row.seq <= through ? parseEvent(row) : undefined));
    const digests = await Promise.all(parsed.map((p) => (p !== undefined && 'event' in p ? digestOrUndefined(this.sha256, p.event) : undefined)));
    let expected = after + 1;
    for (let i = 0; i < rows.length && expected <= through; i++, expected++) {
      const row = rows[i] as ReceivedEvent;
      if (row.seq !== expected) return this.fail(expected, 'it is gone from the log since this page verified it (deleted, truncated or rolled back)');
      const now = parsed[i] as Parsed;
      const was = this.verified[expected - 1] as string;
      if ('problem' in now) return this.fail(expected, `it changed since this page verified it: ${now.problem}`);
      if (now.event.hash !== was || (await digests[i]) !== was) return this.fail(expected, 'it changed since this page verified it (the stored event no longer hashes to the hash verified before: the log was edited)');
    }
    if (rows.length < pageMax && expected <= through) return this.fail(expected, 'it is gone from the log since this page verified it (the log was truncated or rolled back)');
    return this.status();
  }

  /** `seq` is bad: the first bad seq unless an earlier one is; verified only up to before it. */
  private fail(seq: number, problem: string): IntegrityStatus {
    if (this.bad === undefined || seq < this.bad.seq) this.bad = { seq, problem };
    if (this.verified.length >= seq) this.verified.length = seq - 1;
    if (this.nextSeq > seq) this.nextSeq = seq;
    return this.status();
  }

  private check(received: ReceivedEvent, parsed: Parsed, digest: string | undefined): string | undefined {
    if (received.seq !== this.nextSeq) return `expected seq ${this.nextSeq} next, the log has seq ${received.seq} (an event is missing or out of order)`;
    if ('problem' in parsed) return parsed.problem;
    const { event } = parsed;
    if (event.seq !== this.nextSeq) return `the stored body says seq ${String(event.seq)}`;
    if (event.prevHash !== this.prevHash) return 'prevHash is not the previous event\'s hash (the chain is broken here)';
    if (typeof event.hash !== 'string' || !hex64.test(event.hash)) return 'hash is not 64 hex digits';
    if (digest === undefined) return 'the event cannot be put in canonical JSON';
    if (digest !== event.hash) return 'the event does not hash to its hash (its body was edited)';
    return undefined;
  }
}

function digestOrUndefined(sha256: Sha256Hex, event: Record<string, unknown>): Promise<string> | undefined {
  const text = canonicalTextOrUndefined(event);
  return text === undefined ? undefined : sha256(text);
}

function canonicalTextOrUndefined(event: Record<string, unknown>): string | undefined {
  try {
    return canonicalJsonWithout(event, 'hash');
  } catch {
    return undefined;
  }
}

/** WebCrypto's SHA-256, or undefined where the browser offers none (a page served over plain HTTP from another host). */
export function webCryptoSha256(): Sha256Hex | undefined {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) return undefined;
  const encoder = new TextEncoder();
  return async (text) => toHex(new Uint8Array(await subtle.digest('SHA-256', encoder.encode(text))));
}

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
