import type { LedgerEvent } from '../domain/events';
import type { RejectReason } from '../domain/reasons';

/** Bumped whenever a field changes meaning; the verifier refuses versions it does not know. */
/** 2: `summary.sequentialSeed`, the seed's 25 cases apart from those added since. */
export const evidenceSchemaVersion = 2;

export type Outcome = 'admitted' | 'rejected';

export interface Expected {
  readonly outcome: Outcome;
  /** Present for rejections. */
  readonly reason?: RejectReason;
}

export interface Observed extends Expected {
  readonly callId: string;
  /** What `invoke` returned: completed/failed (admitted) or rejected. */
  readonly status: 'completed' | 'failed' | 'rejected';
}

/** One sequential case. Descriptions say what the trick is; argument values are never stored. */
export interface CaseRecord {
  readonly name: string;
  readonly description: string;
  readonly kind: 'allowed' | 'adversarial';
  readonly tool: string;
  readonly expected: Expected;
  readonly observed: Observed;
  readonly storeDigestBefore: string;
  readonly storeDigestAfter: string;
  /** Tool runs that started during the case (0 for every rejection). */
  readonly toolRuns: number;
}

export interface AttemptRecord {
  readonly worker: number;
  readonly attempt: number;
  readonly callId: string;
  readonly outcome: Outcome;
  readonly reason?: RejectReason;
}

export interface ConcurrencyRecord {
  readonly description: string;
  readonly grantId: string;
  readonly budget: { readonly calls: number; readonly inputBytes: number };
  /** Canonical input bytes of every attempt (all attempts are the same size). */
  readonly inputBytesPerCall: number;
  readonly workers: number;
  readonly attemptsPerWorker: number;
  readonly expected: { readonly admitted: number; readonly rejected: number; readonly reason: RejectReason };
  readonly attempts: readonly AttemptRecord[];
  readonly store: { readonly notesBefore: number; readonly notesAfter: number; readonly digestBefore: string; readonly digestAfter: string };
  /** Calls whose tool changed the store, one entry per effect. */
  readonly effectCallIds: readonly string[];
}

export interface RevocationRecord {
  readonly description: string;
  readonly grantId: string;
  readonly abortInFlight: boolean;
  readonly admittedCallId: string;
  readonly admittedStatus: 'completed' | 'failed';
  /** Whether the blocked tool saw its `ctx.signal` aborted. */
  readonly abortObserved: boolean;
  readonly laterCallId: string;
  readonly laterOutcome: Outcome;
  readonly laterReason?: RejectReason;
  /** Event types of the four steps, in log order (re-derived by the verifier from `seq`). */
  readonly order: readonly string[];
  readonly store: { readonly digestBefore: string; readonly digestAfter: string };
  readonly effectCallIds: readonly string[];
}

export interface CountPair {
  readonly attempts: number;
  readonly admitted: number;
  readonly rejected: number;
}

/** Counts over a set of sequential cases. */
export interface SequentialCounts {
  readonly allowed: { readonly total: number; readonly admitted: number };
  readonly adversarial: { readonly total: number; readonly rejected: number };
  readonly rejectedThatModifiedStore: number;
}

/** The published table, as numbers. */
export interface Summary {
  /** Every sequential case (the seed's and those added since). */
  readonly sequential: SequentialCounts;
  /** The seed's 25 cases alone, to read against the seed's published table. */
  readonly sequentialSeed: SequentialCounts;
  readonly concurrencyCalls: CountPair;
  readonly concurrencyBytes: CountPair;
  readonly revocation: { readonly admittedCallCompleted: boolean; readonly laterCallRejected: boolean };
  readonly revocationAbort: { readonly abortObserved: boolean; readonly admittedCallFailed: boolean; readonly laterCallRejected: boolean };
}

export interface Hardware {
  readonly cpuModel: string;
  readonly cpuCount: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly os: { readonly platform: string; readonly release: string; readonly arch: string };
}

export const logNames = ['sequential', 'concurrencyCalls', 'concurrencyBytes', 'revocation', 'revocationAbort'] as const;
export type LogName = (typeof logNames)[number];

export interface Evidence {
  readonly schemaVersion: number;
  readonly createdAt: string;
  /** `commit` is what `git rev-parse HEAD` said (null without git); `dirty`: local changes, untracked included. */
  readonly revision: { readonly commit: string | null; readonly dirty: boolean | null };
  readonly sourceHashes: { readonly [path: string]: string };
  readonly hardware: Hardware;
  readonly durationMs: number;
  readonly cases: readonly CaseRecord[];
  readonly concurrency: { readonly calls: ConcurrencyRecord; readonly bytes: ConcurrencyRecord };
  readonly revocation: { readonly complete: RevocationRecord; readonly abort: RevocationRecord };
  readonly summary: Summary;
  readonly logs: { readonly [name in LogName]: readonly LedgerEvent[] };
}
