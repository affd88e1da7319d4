import { verifyCheckpoint, type Checkpoint } from '../../transparency/checkpoint';
import { CompactFrontier } from '../../transparency/compactFrontier';
import type { TransparencyCrypto } from '../../transparency/crypto';
import { eventLeaf } from '../../transparency/eventLeaves';
import { merkleHasher, type MerkleHasher } from '../../transparency/merkleHasher';
import { parseVerifierKey } from '../../transparency/noteKeys';

// A checkpoint checked in the page with the package's own transparency code (src/transparency: C2SP
// signed-note, note keys, RFC 9162 tree) over crypto that runs in the browser (transparencyCrypto.ts).
// The server only hands over the two texts it was given; it is trusted for none of the verdict.

export type CheckpointState = 'waiting' | 'consistent' | 'bad_signature' | 'inconsistent' | 'malformed';

export interface CheckpointStatus {
  readonly state: CheckpointState;
  readonly message: string;
}

/** Leaves hashed per `advance` call, so a long backlog is folded in over several frames. */
export const leavesPerAdvanceMax = 20_000;

/**
 * Checks the checkpoint's signature once, then folds the verified events' hashes into a compact
 * frontier until it reaches the checkpoint's size and compares the roots: equal means this log is
 * the checkpoint's log or extends it.
 */
export class CheckpointWatcher {
  private readonly hasher: MerkleHasher;
  private readonly frontier: CompactFrontier;
  private readonly checkpoint: Checkpoint | undefined;
  private current: CheckpointStatus;
  /** Found consistent, then an event of its tree turned bad (the message follows the first bad seq). */
  private changedAfterCheck = false;

  constructor(note: string, verifierKeyText: string, crypto: TransparencyCrypto) {
    this.hasher = merkleHasher(crypto);
    this.frontier = new CompactFrontier(this.hasher);
    const key = parseVerifierKey(crypto, verifierKeyText);
    if (!key.ok) {
      this.current = { state: 'malformed', message: `checkpoint: the verifier key is unusable (${key.message})` };
      return;
    }
    const verified = verifyCheckpoint(crypto, note, key.key);
    if (!verified.ok) {
      const state: CheckpointState = verified.code === 'not_signed_by_log' ? 'bad_signature' : 'malformed';
      this.current = { state, message: `checkpoint: ${verified.message}` };
      return;
    }
    this.checkpoint = verified.checkpoint;
    this.current = this.waiting();
  }

  status(): CheckpointStatus {
    return this.current;
  }

  /** Whether `advance` has leaves left to fold from a verified list of this length. */
  hasWork(verifiedCount: number): boolean {
    return this.checkpoint !== undefined && this.current.state === 'waiting' && this.frontier.size < Math.min(this.checkpoint.size, verifiedCount);
  }

  /** Takes in the hashes verified so far (the chain verifier's list; it shrinks only when an event turns bad). */
  advance(verifiedHashes: readonly string[], chainBroken: boolean): CheckpointStatus {
    const checkpoint = this.checkpoint;
    if (checkpoint === undefined) return this.current;
    if ((this.current.state === 'consistent' || this.changedAfterCheck) && chainBroken && verifiedHashes.length < checkpoint.size) {
      // The page's sweep found an event inside the checkpoint's tree changed or gone since it was checked.
      this.changedAfterCheck = true;
      this.current = { state: 'inconsistent', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid, but seq ${verifiedHashes.length + 1} of its tree changed after this page checked it` };
    }
    if (this.current.state !== 'waiting') return this.current;
    const end = Math.min(checkpoint.size, verifiedHashes.length, this.frontier.size + leavesPerAdvanceMax);
    for (let i = this.frontier.size; i < end; i++) this.frontier.appendLeafHash(this.hasher.leaf(eventLeaf(verifiedHashes[i] as string)));
    const head = `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid`;
    if (this.frontier.size === checkpoint.size) {
      this.current = sameBytes(this.frontier.root(), checkpoint.root)
        ? { state: 'consistent', message: `${head}; this log is that checkpoint's log or extends it` }
        : { state: 'inconsistent', message: `${head}, but the first ${checkpoint.size} events have another Merkle root (the history differs)` };
    } else if (chainBroken && verifiedHashes.length < checkpoint.size) {
      this.current = { state: 'inconsistent', message: `${head}, but the chain breaks before seq ${checkpoint.size}` };
    } else this.current = this.waiting();
    return this.current;
  }

  private waiting(): CheckpointStatus {
    const checkpoint = this.checkpoint as Checkpoint;
    return { state: 'waiting', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid; checking the first ${checkpoint.size} events (${this.frontier.size} so far)` };
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
