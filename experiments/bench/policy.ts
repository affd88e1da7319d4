/**
 * The one policy every contender enforces: the agent may call `fs.read` on a path under `data/`
 * when `length` is at most 4096, within a call budget and an input-byte budget.
 */
export const policy = {
  tool: 'fs.read',
  pathPrefix: 'data/',
  lengthMax: 4096,
  callsBudget: 1e9,
  bytesBudget: 1e15,
} as const;

export interface ReadArgs {
  readonly path: string;
  readonly length: number;
}

const files = Array.from({ length: 64 }, (_, i) => `data/reports/q${i % 4}/file-${i}.txt`);

/** The i-th request: allowed paths and sizes, varying so no contender can cache one answer. */
export function request(i: number): ReadArgs {
  return { path: files[i & 63] as string, length: 256 + (i & 1023) };
}

export const inputSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, length: { type: 'integer', minimum: 0 } },
  required: ['path', 'length'],
} as const;
