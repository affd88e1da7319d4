import type { Command } from '../domain/commands';
import type { HopFacts } from '../domain/fetchHop';
import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import { LedgerError } from '../errors';
import type { BatchLoop } from './batchLoop';
import type { BatchResult } from './batchRequest';
import { InvalidCommandError } from './invalidCommandError';
import type { ResourceRefusalCode } from './ports/toolResources';

/** A host's command: its events, or a rejection (InvalidCommandError, or LedgerError when it could not be recorded). */
export function runHost(loop: BatchLoop, command: (at: number) => Command): Promise<readonly LedgerEvent[]> {
  if (loop.closing) return Promise.reject(new LedgerError('closed', 'the ledger is closed'));
  return new Promise((resolve, reject) => {
    const done = (result: BatchResult): void => {
      if (result.kind === 'decided') resolve(result.events);
      else if (result.kind === 'refused') reject(new InvalidCommandError(result.decision.code, result.decision.message));
      else reject(new LedgerError('ledger_unavailable', 'the store could not record the command', { cause: result.cause }));
    };
    if (!loop.submit({ kind: 'host', command, done, queuedAt: loop.queuedAt() })) done({ kind: 'unavailable', cause: 'too many pending commands' });
  });
}

/** An agent's command: its events, or undefined when it could not be recorded (never a throw). */
export function runAgent(loop: BatchLoop, command: (at: number, state: LedgerState) => Command): Promise<readonly LedgerEvent[] | undefined> {
  return new Promise((resolve) => {
    const done = (result: BatchResult): void => resolve(result.kind === 'decided' ? result.events : undefined);
    if (!loop.submit({ kind: 'host', command, done, queuedAt: loop.queuedAt() })) resolve(undefined);
  });
}

/** A hop of a running call's `ctx.fetch`: decided and logged like any command, before any connection. */
export function decideHop(loop: BatchLoop, callId: string, facts: HopFacts): Promise<'allowed' | ResourceRefusalCode> {
  // Also while closing: `close` waits for running calls, whose hops must still be decided.
  return new Promise((resolve) => {
    const done = (result: BatchResult): void => {
      if (result.kind === 'refused') return resolve('call_not_running');
      const event = result.kind === 'decided' ? result.events[0] : undefined;
      if (event === undefined || event.type !== 'fetch.hop') return resolve('ledger_unavailable');
      resolve(event.outcome === 'allowed' ? 'allowed' : (event.reason ?? 'invalid_resource'));
    };
    const command = (at: number): Command => ({ type: 'hop', at, callId, hop: facts.hop, resource: facts.resource, address: facts.address });
    if (!loop.submit({ kind: 'host', command, done, queuedAt: loop.queuedAt() })) done({ kind: 'unavailable', cause: 'too many pending commands' });
  });
}
