import { sealEvent } from '../../src/domain/chain';
import type { EventPayload } from '../../src/domain/events';
import { evolve } from '../../src/domain/evolve';
import { shardGet } from '../../src/domain/shardedMap';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from '../support/given';

function unfrozenPaths(value: unknown, path = 'state', found: string[] = []): string[] {
  if (value === null || typeof value !== 'object') return found;
  if (!Object.isFrozen(value)) found.push(path);
  for (const [key, child] of Object.entries(value)) unfrozenPaths(child, `${path}.${key}`, found);
  return found;
}

describe('evolve: the state it produces', () => {
  it('is frozen at every depth after host events, admissions, settlements and revocations', () => {
    const { state } = given(
      registerNotes,
      issueCommand(),
      issueCommand({}, 'g2'),
      admit(),
      admit({ callId: 'c2' }),
      { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false },
      { type: 'settle', at: T0 + 2, callId: 'c2', outcome: 'failed', refund: true },
      { type: 'revoke', at: T0 + 3, grantId: 'g2', abortInFlight: false },
    );
    expect(unfrozenPaths(state)).toEqual([]);
  });

  it('charges a grant by copying its record only: the old state, the other grants and the scope stay shared', () => {
    const { state: before, when } = given(registerNotes, issueCommand(), issueCommand({}, 'g2'));
    const [payload] = payloads(when(admit()));
    const after = evolve(before, sealEvent(payload as EventPayload, T0 + 1, before.head));
    const g1Before = shardGet(before.grants, 'g1');
    const g1After = shardGet(after.grants, 'g1');
    expect(g1Before?.used).toEqual({ calls: 0, inputBytes: 0 });
    expect(g1After?.used).toEqual({ calls: 1, inputBytes: 10 });
    expect(g1After).not.toBe(g1Before);
    expect(g1After?.scope).toBe(g1Before?.scope);
    expect(shardGet(after.grants, 'g2')).toBe(shardGet(before.grants, 'g2'));
    expect(after.tools).toBe(before.tools);
    expect(after.tokens).toBe(before.tokens);
  });
});
