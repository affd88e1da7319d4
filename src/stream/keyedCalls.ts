import { sha256Hex } from '../domain/chain';
import { limits } from '../domain/limits';
import type { ArgumentSnapshot } from '../tools/arguments';
import type { KeyedCall } from './admitCommand';

/** `idempotencyTtlMs` when the host sets none: 24 h, as payment APIs keep keys. */
export const idempotencyTtlMsDefault = 86_400_000;

/**
 * An agent's idempotency key as the decider sees it: the key's SHA-256, and a SHA-256 over the key,
 * the tool and the canonical arguments. The arguments' digest is salted with the key so that the
 * log, which shows only the key's digest, gives no way to test guesses of low-entropy arguments
 * (`{ "confirm": true }`) without the key itself. `'invalid'` for a key that is not a string of 1-255
 * characters (UTF-16 code units) or holds a lone surrogate (UTF-8 would hash it as U+FFFD, the same
 * as another key); `undefined` when the arguments are not plain JSON (the call is refused
 * `invalid_arguments` anyway). The separators are unambiguous: neither a tool name nor canonical
 * JSON holds a NUL.
 */
export function keyedCall(key: unknown, tool: string, args: ArgumentSnapshot, ttlMs: number, keysMax: number): KeyedCall | 'invalid' | undefined {
  if (typeof key !== 'string' || key.length < 1 || key.length > limits.idempotencyKeyCharsMax || !isWellFormed(key)) return 'invalid';
  if (!args.ok) return undefined;
  return { keyDigest: sha256Hex(key), argsDigest: sha256Hex(`atc.idempotency.v1\u0000${key}\u0000${tool}\u0000${args.canonical}`), ttlMs, keysMax };
}

function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
