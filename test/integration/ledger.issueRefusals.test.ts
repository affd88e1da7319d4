import { InvalidCommandError } from '../../src';
import { manualClock, notesLedger } from '../support/fixtures';

// ledger.issue refuses a malformed scope with InvalidCommandError naming the field, never a raw TypeError.

const valid = (now: number) => ({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: now + 10_000, budget: { calls: 1, inputBytes: 100 } });

it.each<[string, Record<string, unknown>, string]>([
  ['budget null', { budget: null }, 'budget must be { calls, inputBytes }'],
  ['budget missing', { budget: undefined }, 'budget must be { calls, inputBytes }'],
  ['expiresAt NaN', { expiresAt: Number.NaN }, 'expiresAt is required and must be a finite number of ms since epoch'],
  ['tools empty', { tools: [] }, 'tools must be a non-empty array of tool names'],
  ['a tool repeated', { tools: ['notes.write', 'notes.write'] }, 'tool "notes.write" is listed twice'],
  ['resources not an array', { resources: 'notes:/drafts/' }, 'resources must be an array of canonical scopes'],
])('ledger.issue refuses %s with InvalidCommandError naming the field', async (_rule, overrides, message) => {
  const clock = manualClock();
  const { ledger } = await notesLedger({ clock: clock.now });
  const issuing = ledger.issue({ ...valid(clock.now()), ...overrides } as never);
  await expect(issuing).rejects.toBeInstanceOf(InvalidCommandError);
  await expect(issuing).rejects.toThrow(message);
  expect(ledger.events().map((e) => e.type)).toEqual(['tool.registered', 'tool.registered']);
  await ledger.close();
});
