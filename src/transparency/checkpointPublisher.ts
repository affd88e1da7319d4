import { LedgerError } from '../errors';
import type { LedgerEvent } from '../domain/events';
import type { FollowedLog, LogFollower } from '../stream/ports/logFollower';
import { equalBytes } from './bytes';
import { formatCheckpointBody, parseCheckpointBody, verifyCheckpoint, type Checkpoint } from './checkpoint';
import { CompactFrontier, type FrontierJson } from './compactFrontier';
import type { TransparencySigner } from './crypto';
import { eventLeafInto } from './eventLeaves';
import { merkleHasher, type MerkleHasher } from './merkleHasher';
import { nodeCrypto } from './nodeCrypto';
import { parseSignerKey, parseVerifierKey, signNote, verifierKeyOf, type SignerKey, type VerifierKey } from './noteKeys';
import { consistencyProof, verifyConsistency } from './proofs';
import type { CheckpointSink, PublishedCheckpoint } from './checkpointSink';
import { ConsistencyTail } from './consistencyTail';

export interface CheckpointPublisherOptions {
  /** The log's signer key (`PRIVATE+KEY+<origin>+…`, as `atc keygen` writes it); its name is the origin. */
  readonly key: string | SignerKey;
  /** Where signed checkpoints go: a CheckpointSink (e.g. fileCheckpointSink) or a function. */
  readonly sink: CheckpointSink | ((published: PublishedCheckpoint) => void);
  /** Publish once this many events were appended since the last checkpoint. */
  readonly everyEvents?: number;
  /** Publish every this many ms when the log grew (a timer; see `setTimer`). */
  readonly everyMs?: number;
  /**
   * A signed checkpoint this log must contain: opening refuses (LedgerError 'invalid_log') when it
   * is larger than the log or its root is not the log's root at its size.
   */
  readonly checkpoint?: string;
  /** The verifier key of `checkpoint` (`<name>+<id>+<key>`); default: this publisher's own key. */
  readonly checkpointKey?: string;
  /** Sink failures and refusals to sign, which never stop the ledger. Default: a console warning. */
  readonly onError?: (error: Error) => void;
  /** Runs `fn` every `ms`; returns a cancel function. Default: an unref'd setInterval. Tests inject it. */
  readonly setTimer?: (fn: () => void, ms: number) => () => void;
  /** Default: node:crypto. */
  readonly crypto?: TransparencySigner;
  /**
   * Runs the integration of committed events into the tree later, off the commit path (as
   * transparency logs sequence entries first and integrate them after): called with the
   * integration once per run of queued batches, which it must call once, whenever it likes.
   * `(integrate) => integrate()` integrates on the commit path itself. Tests inject it.
   * Default: batched, on an unref'd timer `integrationDelayMs` after the first queued batch, and on
   * setImmediate as soon as the queued events make a checkpoint due.
   */
  readonly schedule?: (integrate: () => void) => void;
}

/**
 * How long committed events wait for integration by default when no checkpoint is due (ms): the
 * integration runs in batches of whatever was committed meanwhile, not once per call. Reads of the
 * tree, a due checkpoint, a full queue and close integrate sooner.
 */
export const integrationDelayMs = 20;

/**
 * Committed events waiting for integration; reaching it integrates them at once, on the commit path.
 * So a process that never yields to the event loop (a loop of calls on microtasks alone) still keeps
 * its tree and checkpoints at most this far behind, in bounded memory.
 */
export const integrationQueueMax = 4_096;

interface Signed {
  readonly size: number;
  readonly root: Uint8Array;
  readonly note: string;
}

/** What the publisher keeps beside a snapshot (JSON). */
interface SavedState {
  readonly v: 1;
  readonly head: FrontierJson;
  readonly anchor?: FrontierJson;
  readonly previous?: string;
}

/**
 * A LogFollower that keeps the log's RFC 9162 tree as a compact frontier (O(log n) per event) and
 * publishes signed C2SP checkpoints. Before signing it proves the new tree consistent with the
 * checkpoint it signed before (RFC 9162 consistency proof from that checkpoint's frontier, the
 * head's and the O(log n) subtrees recorded since: ConsistencyTail) and refuses to sign otherwise.
 * On open it checks the log against every checkpoint it knows of (the configured one, the sink's
 * latest, the one saved with the snapshot).
 *
 * Committed events are only queued on the commit path (`appended`) and integrated into the tree
 * later (`schedule`; by default in batches on a short unref'd timer, or on setImmediate once a
 * checkpoint is due), batch by batch in log order, each checkpoint signed when the integration
 * reaches it: a checkpoint covers exactly the integrated prefix. Whatever reads the tree (tree,
 * latest, snapshotText, publishIfGrown, close) integrates the queue first.
 */
export class CheckpointPublisher implements LogFollower {
  private readonly crypto: TransparencySigner;
  private readonly hasher: MerkleHasher;
  private readonly key: SignerKey;
  private readonly sink: CheckpointSink;
  private readonly onError: (error: Error) => void;
  private head: CompactFrontier;
  /** The frontier at the last signed checkpoint, and what the next consistency proof needs after it. */
  private anchor: CompactFrontier | undefined;
  private tail: ConsistencyTail | undefined;
  /** The hex-decoded hash of the event being appended (no allocation per event). */
  private readonly leafBytes = new Uint8Array(32);
  private previous: Signed | undefined;
  /** Committed batches not yet in the tree, oldest first. */
  private queue: (readonly LedgerEvent[])[] = [];
  private queuedEvents = 0;
  private integrating = false;
  /** A `schedule`d integration not yet run (custom schedule). */
  private integrationScheduled = false;
  private readonly scheduledIntegration = (): void => {
    this.integrationScheduled = false;
    this.integrate();
  };
  /** The default schedule: the batching timer, and a setImmediate once a checkpoint is due. */
  private integrationTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly timedIntegration = (): void => {
    this.integrationTimer = undefined;
    this.integrate();
  };
  private dueIntegrationScheduled = false;
  private readonly dueIntegration = (): void => {
    this.dueIntegrationScheduled = false;
    this.integrate();
  };
  private cancelTimer: (() => void) | undefined;
  private opened = false;
  private failedClosed = false;

  constructor(private readonly options: CheckpointPublisherOptions) {
    this.crypto = options.crypto ?? nodeCrypto;
    this.hasher = merkleHasher(this.crypto);
    if (typeof options.key === 'string') {
      const parsed = parseSignerKey(this.crypto, options.key);
      if (!parsed.ok) throw new TypeError(`checkpointPublisher key: ${parsed.message}`);
      this.key = parsed.key;
    } else this.key = options.key;
    this.sink = typeof options.sink === 'function' ? { publish: options.sink } : options.sink;
    if (this.sink === null || typeof this.sink?.publish !== 'function') throw new TypeError('checkpointPublisher needs a sink');
    for (const [name, value] of [['everyEvents', options.everyEvents], ['everyMs', options.everyMs]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new TypeError(`${name} must be a positive integer`);
    }
    if (options.everyEvents === undefined && options.everyMs === undefined) throw new TypeError('checkpointPublisher needs everyEvents or everyMs');
    this.onError = options.onError ?? ((error) => process.emitWarning(error.message, 'CheckpointPublisher'));
    this.head = new CompactFrontier(this.hasher);
    if (options.schedule !== undefined && typeof options.schedule !== 'function') throw new TypeError('schedule must be a function');
  }

  /** The verifier key of the log (what auditors need, with the checkpoints). */
  get verifierKey(): VerifierKey {
    return verifierKeyOf(this.key);
  }

  /** The last checkpoint this publisher signed (or accepted on open), as a signed note. */
  latest(): string | undefined {
    this.integrate();
    return this.previous?.note;
  }

  /** The current tree: its size and root. */
  tree(): { readonly size: number; readonly root: Uint8Array } {
    this.integrate();
    return { size: this.head.size, root: this.head.root() };
  }

  // ---- LogFollower -----------------------------------------------------------------------------

  open(log: FollowedLog): void {
    if (this.opened) throw new TypeError('a checkpointPublisher follows one ledger');
    this.opened = true;
    const saved = savedStateOf(log, this.hasher);
    const hashes = (after: number, through: number): Iterable<string> => log.hashes(after, through);
    // The head frontier: from the one saved at the snapshot, else from every event.
    this.head = saved?.head.copy() ?? new CompactFrontier(this.hasher);
    this.extend(this.head, hashes(this.head.size, log.head.seq));
    if (this.head.size !== log.head.seq) throw new LedgerError('invalid_log', `the log has ${this.head.size} events up to seq ${log.head.seq}`);

    // Every checkpoint known must be contained in the log; the largest becomes the previous one.
    const known: { readonly what: string; readonly signed: Signed }[] = [];
    if (saved?.previous !== undefined) known.push({ what: 'the checkpoint saved with the snapshot', signed: saved.previous });
    const fromSink = this.sink.latest?.();
    if (fromSink !== undefined) known.push({ what: "the sink's latest checkpoint", signed: this.verified(fromSink, this.verifierKey, "the sink's latest checkpoint") });
    if (this.options.checkpoint !== undefined) known.push({ what: 'the configured checkpoint', signed: this.verified(this.options.checkpoint, this.configuredKey(), 'the configured checkpoint') });
    const frontierAt = (size: number): CompactFrontier => {
      if (size === this.head.size) return this.head.copy();
      const base = saved?.anchor !== undefined && saved.anchor.size <= size ? saved.anchor.copy() : new CompactFrontier(this.hasher);
      this.extend(base, hashes(base.size, size));
      return base;
    };
    let largest: (Signed & { frontier: CompactFrontier }) | undefined;
    for (const { what, signed } of known) {
      if (signed.size > log.head.seq) {
        throw new LedgerError('invalid_log', `${what} is at size ${signed.size}, newer than the log (${log.head.seq} events): the log was truncated or rolled back`);
      }
      const frontier = frontierAt(signed.size);
      if (!equalBytes(frontier.root(), signed.root)) {
        throw new LedgerError('invalid_log', `${what} (size ${signed.size}) does not match the log's tree at that size: the log was rewritten or forked`);
      }
      if (largest === undefined || signed.size > largest.size) largest = { ...signed, frontier };
    }
    if (largest !== undefined) {
      this.previous = { size: largest.size, root: largest.root, note: largest.note };
      this.anchor = largest.frontier;
      // What the next consistency proof needs, recorded by replaying that checkpoint's frontier to the head.
      const tail = new ConsistencyTail(this.hasher, largest.size);
      const replay = largest.frontier.copy();
      for (const hash of hashes(largest.size, log.head.seq)) replay.appendLeaf(eventLeafInto(hash, this.leafBytes), tail.record);
      this.tail = tail;
      // The replay is the tree the log has: a saved head that differs from it is a corrupted cache.
      // Its nodes after the checkpoint would enter both the next proof and the head root (which would
      // then agree), so it is caught here, and nothing more is signed.
      if (!equalBytes(replay.root(), this.head.root())) {
        this.failedClosed = true;
        this.report(new LedgerError('invalid_log', `refusing to sign checkpoints: the tree saved with the snapshot (size ${this.head.size}) is not consistent with the checkpoint signed at size ${largest.size} and the log's events since`));
      }
    }
    if (this.options.everyMs !== undefined) {
      const setTimer = this.options.setTimer ?? defaultTimer;
      this.cancelTimer = setTimer(() => this.publishIfGrown(), this.options.everyMs);
    }
    if (this.due()) this.publishIfGrown();
  }

  /** On the commit path: queues the batch (the ledger's events are immutable) for integration. */
  appended(events: readonly LedgerEvent[]): void {
    if (events.length === 0) return;
    this.queue.push(events);
    this.queuedEvents += events.length;
    if (this.queuedEvents >= integrationQueueMax) this.integrate();
    else if (this.options.schedule !== undefined) this.scheduleWith(this.options.schedule);
    else if (this.dueAt(this.head.size + this.queuedEvents)) {
      // A checkpoint is due: integrate (and sign) on the next turn of the event loop, not a timer later.
      if (!this.dueIntegrationScheduled) {
        this.dueIntegrationScheduled = true;
        setImmediate(this.dueIntegration);
      }
    } else if (this.integrationTimer === undefined) {
      this.integrationTimer = setTimeout(this.timedIntegration, integrationDelayMs);
      this.integrationTimer.unref();
    }
  }

  private scheduleWith(schedule: (integrate: () => void) => void): void {
    if (this.integrationScheduled) return;
    this.integrationScheduled = true;
    try {
      schedule(this.scheduledIntegration);
    } catch (error) {
      this.integrationScheduled = false;
      this.report(error);
    }
  }

  /** Integrates every queued event into the tree now, publishing each checkpoint that falls due on the way. */
  integrate(): void {
    // Re-entered from a sink or an error handler: the running loop takes what was queued meanwhile, in order.
    if (this.integrating) return;
    this.integrating = true;
    try {
      for (let i = 0; i < this.queue.length; i++) this.integrateBatch(this.queue[i] as readonly LedgerEvent[]);
    } finally {
      this.queue = [];
      this.queuedEvents = 0;
      this.integrating = false;
    }
  }

  snapshotText(): string {
    this.integrate();
    const state: SavedState = {
      v: 1,
      head: this.head.toJson(),
      ...(this.anchor !== undefined ? { anchor: this.anchor.toJson() } : {}),
      ...(this.previous !== undefined ? { previous: this.previous.note } : {}),
    };
    return JSON.stringify(state);
  }

  /** On close, the head is published if it grew since the last checkpoint. */
  close(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.integrationTimer !== undefined) clearTimeout(this.integrationTimer);
    this.integrationTimer = undefined;
    this.publishIfGrown();
  }

  /** Signs and publishes a checkpoint of the current head now, unless it is the last one's size. */
  publishIfGrown(): PublishedCheckpoint | undefined {
    this.integrate();
    return this.publishIntegrated();
  }

  // ---- inside ----------------------------------------------------------------------------------

  /** One committed batch into the tree; a checkpoint when one is due after it (as if on the commit path). */
  private integrateBatch(events: readonly LedgerEvent[]): void {
    try {
      const record = this.tail?.record;
      for (const event of events) this.head.appendLeaf(eventLeafInto(event.hash, this.leafBytes), record);
      if (this.due()) this.publishIntegrated();
    } catch (error) {
      this.report(error);
    }
  }

  /** A checkpoint of the integrated head, unless it is the last one's size. */
  private publishIntegrated(): PublishedCheckpoint | undefined {
    if (this.failedClosed || (this.previous !== undefined && this.head.size === this.previous.size)) return undefined;
    try {
      return this.sign();
    } catch (error) {
      this.report(error);
      return undefined;
    }
  }

  private due(): boolean {
    return this.dueAt(this.head.size);
  }

  /** Whether a tree of `size` leaves is due for a checkpoint (everyEvents since the last one). */
  private dueAt(size: number): boolean {
    return !this.failedClosed && this.options.everyEvents !== undefined && size - (this.previous?.size ?? 0) >= this.options.everyEvents;
  }

  private sign(): PublishedCheckpoint {
    const size = this.head.size;
    const root = this.head.root();
    const previous = this.previous;
    let proof: Uint8Array[] = [];
    if (previous !== undefined && previous.size > 0) {
      proof = consistencyProof(previous.size, size, (start, end) => this.rangeRoot(start, end));
      if (!verifyConsistency(this.hasher, previous.size, size, proof, previous.root, root)) {
        // Never sign a tree that does not extend the last signed one; stop signing altogether.
        this.failedClosed = true;
        throw new LedgerError('invalid_log', `refusing to sign a checkpoint at size ${size}: it is not consistent with the checkpoint signed at size ${previous.size}`);
      }
    }
    const checkpoint: Checkpoint = { origin: this.key.name, size, root, extensions: [] };
    const note = signNote(this.crypto, this.key, formatCheckpointBody(checkpoint));
    this.previous = { size, root, note };
    this.anchor = this.head.copy();
    this.tail = new ConsistencyTail(this.hasher, size);
    const published: PublishedCheckpoint = { note, checkpoint, previous: previous === undefined ? undefined : { size: previous.size, root: previous.root }, consistencyProof: proof };
    this.sink.publish(published);
    return published;
  }

  /** MTH of a range the consistency proof asks for: a perfect subtree of the anchor, or one after it (the tail). */
  private rangeRoot(start: number, end: number): Uint8Array {
    const anchor = this.anchor as CompactFrontier;
    const tail = this.tail as ConsistencyTail;
    if (end <= anchor.size) {
      const node = anchor.ranges().find((r) => r.start === start && r.end === end);
      if (node === undefined) throw new Error(`no perfect subtree [${start}, ${end}) in the frontier at ${anchor.size}`);
      return node.root;
    }
    if (start < anchor.size) throw new Error(`range [${start}, ${end}) straddles the last checkpoint at ${anchor.size}`);
    return tail.rangeRoot(start, end, this.head);
  }

  private extend(frontier: CompactFrontier, hashes: Iterable<string>): void {
    for (const hash of hashes) frontier.appendLeaf(eventLeafInto(hash, this.leafBytes));
  }

  private configuredKey(): VerifierKey {
    if (this.options.checkpointKey === undefined) return this.verifierKey;
    const parsed = parseVerifierKey(this.crypto, this.options.checkpointKey);
    if (!parsed.ok) throw new TypeError(`checkpointKey: ${parsed.message}`);
    return parsed.key;
  }

  private verified(note: string, key: VerifierKey, what: string): Signed {
    const result = verifyCheckpoint(this.crypto, note, key);
    if (!result.ok) throw new LedgerError('invalid_log', `${what} does not verify with ${key.name}'s key: ${result.message}`);
    return { size: result.checkpoint.size, root: result.checkpoint.root, note };
  }

  private report(error: unknown): void {
    try {
      this.onError(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing error handler must not reach the ledger's commit path.
    }
  }
}

function defaultTimer(fn: () => void, ms: number): () => void {
  const timer = setInterval(fn, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/** The state saved beside the snapshot the ledger opened from; undefined when absent or unusable. */
function savedStateOf(log: FollowedLog, hasher: MerkleHasher): { head: CompactFrontier; anchor: CompactFrontier | undefined; previous: Signed | undefined } | undefined {
  const text = log.snapshot?.text;
  if (text === undefined || text.length > 1_000_000) return undefined;
  let value: Partial<SavedState>;
  try {
    value = JSON.parse(text) as Partial<SavedState>;
  } catch {
    return undefined;
  }
  if (value?.v !== 1) return undefined;
  const head = CompactFrontier.fromJson(hasher, value.head);
  if (head === undefined || head.size !== log.snapshot?.seq) return undefined;
  const anchor = value.anchor === undefined ? undefined : CompactFrontier.fromJson(hasher, value.anchor);
  const body = typeof value.previous === 'string' ? parseCheckpointBody(value.previous.slice(0, value.previous.indexOf('\n\n') + 1)) : undefined;
  const previous = body !== undefined ? { size: body.size, root: body.root, note: value.previous as string } : undefined;
  // The anchor is the frontier at the previous checkpoint: both or neither, and of the same size.
  if ((anchor === undefined) !== (previous === undefined) || (anchor !== undefined && (anchor.size !== previous?.size || anchor.size > head.size))) return undefined;
  return { head, anchor, previous };
}

/** The transparency option of createLedger: a Merkle tree of the log that publishes signed checkpoints. */
export function checkpointPublisher(options: CheckpointPublisherOptions): CheckpointPublisher {
  return new CheckpointPublisher(options);
}
