import type { Command } from '../domain/commands';
import type { Decision } from '../domain/decide';
import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import type { AgentCall, ArgumentRefusal } from './admitCommand';
import type { CheckedResources } from './ports/toolResources';

/** What a batch tells each request: its events, a refusal, or that the store failed. */
export type BatchResult =
  | { readonly kind: 'decided'; readonly events: readonly LedgerEvent[] }
  | { readonly kind: 'refused'; readonly decision: Extract<Decision, { ok: false }> }
  | { readonly kind: 'unavailable'; readonly cause: unknown };

export type HostRequest = { readonly kind: 'host'; readonly command: (at: number, state: LedgerState) => Command; readonly done: (r: BatchResult) => void; readonly queuedAt: number };
export type InvokeRequest = AgentCall & { readonly kind: 'invoke'; readonly done: (r: BatchResult) => void; readonly queuedAt: number; checked: CheckedResources; refusal?: ArgumentRefusal };
/** An asynchronous store's periodic fold of other writers' events (it decides nothing). */
export type CatchUpRequest = { readonly kind: 'catchUp'; readonly done: (r: BatchResult) => void; readonly queuedAt: number };
export type Request = HostRequest | InvokeRequest | CatchUpRequest;
