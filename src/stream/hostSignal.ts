import { types } from 'node:util';

/**
 * A host's `signal` is host input: an object that only looks like an AbortSignal, or a real one with
 * own properties shadowing its methods, could throw after the call is admitted and leave it
 * unsettled. So the ledger checks the brand (the prototype's getter throws on anything that is not a
 * real AbortSignal) and then reaches the signal only through the prototypes' own functions.
 */
const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get as (this: AbortSignal) => boolean;
const reasonGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'reason')?.get as (this: AbortSignal) => unknown;
const { addEventListener, removeEventListener } = EventTarget.prototype;

/** A real AbortSignal, not a Proxy of one (whose traps Node's brand checks would forward to, and which could throw later). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (types.isProxy(value)) return false;
  try {
    abortedGetter.call(value as AbortSignal);
    return true;
  } catch {
    return false;
  }
}

export function signalAborted(signal: AbortSignal | undefined): boolean {
  return signal !== undefined && abortedGetter.call(signal);
}

export function signalReason(signal: AbortSignal | undefined): unknown {
  return signal === undefined ? undefined : reasonGetter.call(signal);
}

export function onSignalAbort(signal: AbortSignal | undefined, listener: () => void): () => void {
  if (signal === undefined) return () => undefined;
  addEventListener.call(signal, 'abort', listener, { once: true });
  return () => removeEventListener.call(signal, 'abort', listener);
}
