import Ajv, { type ErrorObject } from 'ajv';
import type { JsonObject } from '../domain/json';
import { isRejectReason, type RejectReason } from '../domain/reasons';

/** One sample call of `atc policy test`: the tool, its arguments, when (ms since epoch) and the outcome expected. */
export interface PolicyCase {
  readonly name?: string;
  readonly tool: string;
  readonly args: JsonObject;
  readonly at?: number;
  readonly expect: 'admitted' | RejectReason;
}

/** Bounds on a cases file (it may come from anywhere): its bytes, and how many cases. */
export const casesBytesMax = 8 * 1_048_576;
export const casesMax = 10_000;

const schema = {
  type: 'array',
  maxItems: casesMax,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['tool', 'args', 'expect'],
    properties: {
      name: { type: 'string', maxLength: 200 },
      tool: { type: 'string', minLength: 1, maxLength: 128 },
      args: { type: 'object' },
      at: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      expect: { type: 'string', minLength: 1, maxLength: 64 },
    },
  },
} as const;

const validate = new Ajv({ allErrors: false, strict: true }).compile(schema);

export class PolicyCasesError extends Error {
  override readonly name = 'PolicyCasesError';
}

function where(error: ErrorObject): string {
  const parts = error.instancePath.split('/').slice(1);
  const [index, field] = parts;
  const extra = error.keyword === 'additionalProperties' ? String((error.params as { additionalProperty: string }).additionalProperty) : error.keyword === 'required' ? String((error.params as { missingProperty: string }).missingProperty) : field;
  return `cases${index !== undefined ? `[${index}]` : ''}${extra !== undefined ? `.${extra}` : ''}`;
}

/**
 * Reads a cases file's text: bounded in bytes and cases, each case checked (`expect` is
 * "admitted" or a reject reason; times, `at` or else `now`, never go back). Throws `PolicyCasesError`
 * naming the case and field; never echoes a value from the file.
 */
export function parsePolicyCases(text: string, now: number): readonly PolicyCase[] {
  if (Buffer.byteLength(text, 'utf8') > casesBytesMax) throw new PolicyCasesError(`the cases file is larger than ${casesBytesMax} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new PolicyCasesError('the cases file is not JSON');
  }
  if (!validate(value)) {
    const error = (validate.errors as ErrorObject[])[0] as ErrorObject;
    const message = error.keyword === 'additionalProperties' ? 'is not a case field (tool, args, at, expect, name)' : (error.message ?? 'is malformed');
    throw new PolicyCasesError(`${where(error)}: ${message}`);
  }
  const cases = value as readonly PolicyCase[];
  let last = -Infinity;
  cases.forEach((c, i) => {
    if (c.expect !== 'admitted' && !isRejectReason(c.expect)) throw new PolicyCasesError(`cases[${i}].expect: must be "admitted" or a reject reason (docs/reasons.md)`);
    // A case without `at` is decided at `now`: time must not go back from one case to the next.
    const at = c.at ?? now;
    if (at < last) throw new PolicyCasesError(`cases[${i}].at: is before an earlier case's time; cases are decided in order, so time must not go back`);
    last = at;
  });
  return cases;
}
