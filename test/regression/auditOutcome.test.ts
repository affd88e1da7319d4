import { createLedger, sqliteStore } from '../../src';
import { runAudit } from '../../src/cli/commands/audit';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

// `atc audit` showed a call the upstream failed only as "admitted": the outcome column says how
// each admitted call was settled (and nothing for a rejection).
let tmp: ReturnType<typeof sqliteTempDir>;
beforeEach(() => (tmp = sqliteTempDir()));
afterEach(() => tmp.cleanup());

async function logWithOutcomes(file: string): Promise<void> {
  let now = 1_000;
  const ledger = createLedger({ store: sqliteStore({ path: file }), clock: () => now });
  await ledger.registerTool({ name: 'ok', inputSchema: { type: 'object' }, run: () => 'fine' });
  await ledger.registerTool({ name: 'boom', inputSchema: { type: 'object' }, run: () => Promise.reject(new Error('upstream down')) });
  const { token } = await ledger.issue({ tools: ['ok', 'boom'], expiresAt: 10_000_000, budget: { calls: 10, inputBytes: 1000 } });
  await ledger.invoke(token, 'ok', {});
  await ledger.invoke(token, 'boom', {});
  await ledger.invoke(token, 'nope', {});
  now += 1;
  await ledger.close();
}

it('prints completed, failed, and - for a rejection, in the table and in --json', async () => {
  const file = tmp.file('l.sqlite');
  await logWithOutcomes(file);
  const json = captureIo();
  expect(await runAudit([file, '--json'], json)).toBe(0);
  const rows = json.stdout.map((l) => JSON.parse(l) as { tool: string; decision: string; outcome?: string });
  expect(rows.map((r) => [r.tool, r.decision, r.outcome])).toEqual([
    ['ok', 'admitted', 'completed'],
    ['boom', 'admitted', 'failed'],
    ['nope', 'rejected', undefined],
  ]);
  const table = captureIo();
  expect(await runAudit([file], table)).toBe(0);
  expect(table.stdout[0]).toMatch(/decision +reason +outcome +bytes/);
  expect(table.stdout[1]).toMatch(/ ok +admitted +- +completed /);
  expect(table.stdout[2]).toMatch(/ boom +admitted +- +failed /);
  expect(table.stdout[3]).toMatch(/ nope +rejected +unknown_tool +- /);
});
