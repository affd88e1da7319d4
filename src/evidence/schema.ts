import Ajv from 'ajv';
import { rejectReasons } from '../domain/reasons';
import { logNames } from './types';

// An evidence file is untrusted input: its shape is checked before anything reads it.
const hex64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const count = { type: 'integer', minimum: 0 };
const str = { type: 'string', minLength: 1 };
const outcome = { enum: ['admitted', 'rejected'] };
const reason = { enum: [...rejectReasons] };
const object = (properties: Record<string, unknown>, optional: readonly string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  properties,
});

const expected = object({ outcome, reason }, ['reason']);
const caseRecord = object({
  name: str,
  description: str,
  kind: { enum: ['allowed', 'adversarial'] },
  tool: str,
  expected,
  observed: object({ outcome, reason, callId: str, status: { enum: ['completed', 'failed', 'rejected'] } }, ['reason']),
  storeDigestBefore: hex64,
  storeDigestAfter: hex64,
  toolRuns: count,
});
const concurrency = object({
  description: str,
  grantId: str,
  budget: object({ calls: count, inputBytes: count }),
  inputBytesPerCall: count,
  workers: { type: 'integer', minimum: 1 },
  attemptsPerWorker: { type: 'integer', minimum: 1 },
  expected: object({ admitted: count, rejected: count, reason }),
  attempts: { type: 'array', items: object({ worker: count, attempt: count, callId: str, outcome, reason }, ['reason']) },
  store: object({ notesBefore: count, notesAfter: count, digestBefore: hex64, digestAfter: hex64 }),
  effectCallIds: { type: 'array', items: str },
});
const revocation = object(
  {
    description: str,
    grantId: str,
    abortInFlight: { type: 'boolean' },
    admittedCallId: str,
    admittedStatus: { enum: ['completed', 'failed'] },
    abortObserved: { type: 'boolean' },
    laterCallId: str,
    laterOutcome: outcome,
    laterReason: reason,
    order: { type: 'array', items: str },
    store: object({ digestBefore: hex64, digestAfter: hex64 }),
    effectCallIds: { type: 'array', items: str },
  },
  ['laterReason'],
);
const pair = object({ attempts: count, admitted: count, rejected: count });
const bool = { type: 'boolean' };
const sequentialCounts = object({
  allowed: object({ total: count, admitted: count }),
  adversarial: object({ total: count, rejected: count }),
  rejectedThatModifiedStore: count,
});
const summary = object({
  sequential: sequentialCounts,
  sequentialSeed: sequentialCounts,
  concurrencyCalls: pair,
  concurrencyBytes: pair,
  revocation: object({ admittedCallCompleted: bool, laterCallRejected: bool }),
  revocationAbort: object({ abortObserved: bool, admittedCallFailed: bool, laterCallRejected: bool }),
});

export const evidenceSchema = object({
  schemaVersion: { type: 'integer' },
  createdAt: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z$' },
  revision: object({ commit: { anyOf: [{ type: 'string', pattern: '^[0-9a-f]{40}$' }, { type: 'null' }] }, dirty: { type: ['boolean', 'null'] } }),
  sourceHashes: { type: 'object', minProperties: 1, propertyNames: { pattern: '^(?!/)(?!.*(^|/)\\.\\.?(/|$))[^\\\\]+$' }, additionalProperties: hex64 },
  hardware: object({
    cpuModel: { type: 'string' },
    cpuCount: { type: 'integer', minimum: 1 },
    memoryBytes: { type: 'integer', minimum: 1 },
    node: { type: 'string', pattern: '^v\\d+\\.\\d+\\.\\d+' },
    os: object({ platform: str, release: str, arch: str }),
  }),
  durationMs: count,
  cases: { type: 'array', items: caseRecord },
  concurrency: object({ calls: concurrency, bytes: concurrency }),
  revocation: object({ complete: revocation, abort: revocation }),
  summary,
  // Events are checked one by one by the library's `verify`, which reports each by seq.
  logs: object(Object.fromEntries(logNames.map((n) => [n, { type: 'array', items: { type: 'object' } }]))),
});

const ajv = new Ajv({ allErrors: true, strict: false });
export const validateEvidenceShape = ajv.compile(evidenceSchema);

/** Says what is wrong with the file's shape (at most `max` problems), or [] when it is well formed. */
export function evidenceShapeProblems(doc: unknown, max = 20): string[] {
  if (validateEvidenceShape(doc)) return [];
  return (validateEvidenceShape.errors ?? []).slice(0, max).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
}
