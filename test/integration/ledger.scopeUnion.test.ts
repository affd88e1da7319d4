import { manualClock, notesLedger } from '../support/fixtures';

// The shell checks a call's resources against every scope of its grant, not only the first one.

it('admits a call under the second of two scopes and rejects one under neither', async () => {
  const clock = manualClock();
  const { ledger, notes } = await notesLedger({ clock: clock.now });
  const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/', 'notes:/shared/'], expiresAt: clock.now() + 10_000, budget: { calls: 5, inputBytes: 1_000 } });
  expect(await ledger.invoke(token, 'notes.write', { path: 'shared/a', text: 'x' })).toMatchObject({ status: 'completed' });
  expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'y' })).toMatchObject({ status: 'completed' });
  expect(await ledger.invoke(token, 'notes.write', { path: 'secrets/a', text: 'z' })).toMatchObject({ status: 'rejected', reason: 'resource_not_permitted' });
  expect([...notes.keys()]).toEqual(['shared/a', 'drafts/a']);
  await ledger.close();
});
