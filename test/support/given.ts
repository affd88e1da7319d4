import { sealEvent } from '../../src/domain/chain';
import type { Command } from '../../src/domain/commands';
import { decide } from '../../src/domain/decide';
import type { EventPayload, LedgerEvent } from '../../src/domain/events';
import { evolve } from '../../src/domain/evolve';
import { initialState, type LedgerState } from '../../src/domain/state';

/**
 * given(commands…).when(command).then(…): the decider's tests, emmett-style, over pure functions.
 * `given` folds the commands' events into a state, failing loudly if one is refused.
 */
export function given(...commands: Command[]): { state: LedgerState; events: LedgerEvent[]; when: (command: Command) => ReturnType<typeof decide> } {
  let state = initialState;
  const events: LedgerEvent[] = [];
  for (const command of commands) {
    const decision = decide(state, command);
    if (!decision.ok) throw new Error(`given: ${command.type} refused: ${decision.message}`);
    for (const payload of decision.events) {
      const event = sealEvent(payload, command.at, state.head);
      state = evolve(state, event);
      events.push(event);
    }
  }
  return { state, events, when: (command) => decide(state, command) };
}

export function payloads(decision: ReturnType<typeof decide>): readonly EventPayload[] {
  if (!decision.ok) throw new Error(`refused: ${decision.message}`);
  return decision.events;
}

export const T0 = 1_000_000;

export const registerNotes: Command = {
  type: 'registerTool',
  at: T0,
  tool: 'notes.write',
  inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
};
export const registerRead: Command = { type: 'registerTool', at: T0, tool: 'notes.read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } };

export function issueCommand(overrides: Partial<Extract<Command, { type: 'issue' }>['scope']> = {}, grantId = 'g1'): Command {
  return {
    type: 'issue',
    at: T0,
    grantId,
    tokenDigest: grantId.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a').slice(0, 64),
    scope: { tools: ['notes.write'], args: {}, resources: ['notes:/drafts/'], notBefore: T0, expiresAt: T0 + 60_000, budget: { calls: 2, inputBytes: 100 }, ...overrides },
  };
}

export function admit(overrides: Partial<Extract<Command, { type: 'admit' }>> = {}): Command {
  return { type: 'admit', at: T0 + 1, callId: 'c1', grantId: 'g1', tool: 'notes.write', inputBytes: 10, argumentCheck: 'ok', resourceCheck: 'ok', ...overrides };
}
