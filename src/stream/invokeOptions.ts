import { isAbortSignal } from './hostSignal';
import type { KeyedInvokeOptions } from './types';

/** What `invoke` takes from its options object, read once. */
export interface ReadInvokeOptions {
  readonly idempotencyKey: unknown;
  readonly signal: AbortSignal | undefined;
}

const noOptions: ReadInvokeOptions = Object.freeze({ idempotencyKey: undefined, signal: undefined });

/**
 * Reads `invoke`'s options once, each field a single time. The options object is host input and may
 * be hostile (a throwing getter, a Proxy whose traps throw, a `signal` that is not an AbortSignal):
 * `'unreadable'` then, and the call is refused `invalid_arguments` rather than `invoke` throwing or
 * guessing what was meant.
 */
export function readInvokeOptions(options: unknown): ReadInvokeOptions | 'unreadable' {
  if (options === undefined || options === null || (typeof options !== 'object' && typeof options !== 'function')) return noOptions;
  try {
    const { idempotencyKey, signal } = options as Partial<KeyedInvokeOptions>;
    // Anything but a real AbortSignal would be called into after admission, where a throw could leave
    // an admitted call unsettled: refuse it up front (hostSignal.ts).
    if (signal !== undefined && !isAbortSignal(signal)) return 'unreadable';
    return idempotencyKey === undefined && signal === undefined ? noOptions : { idempotencyKey, signal };
  } catch {
    return 'unreadable';
  }
}
