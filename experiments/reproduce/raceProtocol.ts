import type { MessagePort } from 'node:worker_threads';
import type { RejectReason } from '../../src';

/** Slots of the shared Int32Array barrier. */
export const barrierSlot = { arrived: 0, go: 1 } as const;
export const barrierSlots = 2;

/** What the main thread hands each worker: only the token, like an agent, and a port to call through. */
export interface RaceWorkerData {
  readonly worker: number;
  readonly attempts: number;
  readonly token: string;
  readonly tool: string;
  readonly port: MessagePort;
  readonly barrier: SharedArrayBuffer;
}

/**
 * Worker → main, through the worker's port: one `invoke`. Arguments travel as JSON text, as a tool
 * call does over MCP's JSON-RPC, and the main thread parses them, so the ledger receives what a
 * transport would deliver.
 */
export interface InvokeRequest {
  readonly attempt: number;
  readonly token: string;
  readonly tool: string;
  readonly argsJson: string;
}

/** Main → worker: the decision (no value, no arguments). */
export interface InvokeReply {
  readonly attempt: number;
  readonly callId: string;
  readonly status: 'completed' | 'failed' | 'rejected';
  readonly reason?: RejectReason;
}

/** Worker → main, through parentPort. */
export type WorkerReport = { readonly kind: 'arrived' } | { readonly kind: 'done'; readonly replies: readonly InvokeReply[] };

/**
 * The arguments of attempt `attempt` of worker `worker`. Every attempt has the same canonical size
 * (single-digit worker and attempt numbers), so a byte budget of 7 × size admits exactly 7.
 */
export function raceArgs(worker: number, attempt: number): { path: string; text: string } {
  return { path: `race/argv-w${worker}a${attempt}`, text: 'argv-race' };
}
