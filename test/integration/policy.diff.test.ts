import fs from 'node:fs';
import { createLedger, sqliteStore, type Ledger } from '../../src';
import { runPolicy } from '../../src/cli/commands/policy';
import { runExport } from '../../src/cli/commands/export';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

// Fixture logs built here with an injected clock: one root grant issued from a known policy, calls
// admitted and rejected, then `atc policy diff` re-decides them under candidates.
const t0 = Date.parse('2026-03-01T09:00:00Z');
const minute = 60_000;
const logged = {
  tools: ['read_file', 'write_file'],
  args: { write_file: { properties: { content: { maxLength: 20 } } } },
  resources: { read_file: ['fs:{path}'], write_file: ['fs:{path}'] },
  scopes: ['fs:/srv/'],
  expiresIn: '1h',
  budget: { calls: 10, inputBytes: 10_000 },
};

let tmp: ReturnType<typeof sqliteTempDir>;
beforeEach(() => (tmp = sqliteTempDir()));
afterEach(() => tmp.cleanup());

const str = { type: 'string' };
async function withTools(file: string, clock: () => number): Promise<Ledger> {
  const ledger = createLedger({ store: sqliteStore({ path: file }), clock });
  for (const name of ['read_file', 'write_file', 'delete_file']) {
    await ledger.registerTool({ name, inputSchema: { type: 'object', properties: { path: str, content: str }, required: ['path'] }, resources: (args) => [`fs:${String(args.path)}`], run: () => 'ok' });
  }
  return ledger;
}

/** seq 4 grant; calls: read (+0), read (+1m), write (+2m), write too long (+3m), delete (+4m), read outside (+5m). */
async function fixtureLog(file: string): Promise<{ grantId: string; token: string }> {
  let now = t0;
  const ledger = await withTools(file, () => now);
  const { grantId, token } = await ledger.issue({ tools: logged.tools, args: logged.args, resources: logged.scopes, expiresAt: t0 + 3_600_000, budget: logged.budget, resourceTemplates: logged.resources });
  const calls: [string, Record<string, string>][] = [
    ['read_file', { path: '/srv/a' }],
    ['read_file', { path: '/srv/b' }],
    ['write_file', { path: '/srv/c', content: 'short' }],
    ['write_file', { path: '/srv/c', content: 'far more than twenty characters' }],
    ['delete_file', { path: '/srv/a' }],
    ['read_file', { path: '/etc/passwd' }],
  ];
  for (const [i, [tool, args]] of calls.entries()) {
    now = t0 + i * minute;
    await ledger.invoke(token, tool, args);
  }
  await ledger.close();
  return { grantId, token };
}

interface DiffJson {
  ok: boolean;
  grants: string[];
  calls: number;
  changes: { seq: number; tool: string; before: string; after: string; assuming?: string[] }[];
  open: Record<string, number>;
  refused: unknown[];
}

async function diff(log: string, candidate: object, extra: string[] = []): Promise<{ code: number; json: DiffJson; stderr: string[] }> {
  const file = tmp.file(`candidate-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(candidate));
  const io = captureIo();
  const code = await runPolicy(['diff', log, '--policy', file, '--json', ...extra], io);
  return { code, json: (io.stdout[0] !== undefined ? JSON.parse(io.stdout[0]) : undefined) as DiffJson, stderr: io.stderr };
}
const moves = (d: DiffJson): string[] => d.changes.map((c) => `${c.tool} ${c.before} → ${c.after}${c.assuming ? ` assuming ${c.assuming.join(',')}` : ''}`);

describe('atc policy diff re-decides a log under a candidate', () => {
  it('the policy the log was issued under changes nothing and leaves nothing open (exit 0)', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const { code, json } = await diff(log, logged);
    expect(json).toMatchObject({ ok: true, calls: 6, changes: [], open: { input_schema: 0, argument_narrowing: 0, resources: 0, meters: 0 } });
    expect(code).toBe(0);
  });

  it('lists calls a candidate without a tool would refuse, with seq, tool, before and after (exit 1)', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const { code, json } = await diff(log, { ...logged, tools: ['write_file'], resources: { write_file: ['fs:{path}'] } });
    expect(code).toBe(1);
    expect(moves(json)).toEqual(['read_file admitted → tool_not_granted', 'read_file admitted → tool_not_granted', 'read_file resource_not_permitted → tool_not_granted']);
    expect(json.changes.map((c) => c.seq)).toEqual([5, 7, 13]);
  });

  it('re-decides budgets and rate windows in log order', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    expect(moves((await diff(log, { ...logged, budget: { calls: 2, inputBytes: 10_000 } })).json)).toEqual(['write_file admitted → call_budget_exhausted']);
    expect(moves((await diff(log, { ...logged, budget: { ...logged.budget, rate: { calls: 1, windowMs: 90_000 } } })).json)).toEqual(['read_file admitted → rate_limited']);
  });

  it("starts a candidate's expiresIn at the grant's issue time", async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const { json } = await diff(log, { ...logged, expiresIn: '90s' });
    expect(moves(json)).toEqual(['write_file admitted → expired', 'write_file argument_not_permitted → expired', 'delete_file tool_not_granted → expired', 'read_file resource_not_permitted → expired']);
  });

  it('a newly granted tool is admitted only on what the log can say: its arguments were never checked', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const { json } = await diff(log, { ...logged, tools: [...logged.tools, 'delete_file'], resources: { ...logged.resources, delete_file: ['fs:{path}'] } });
    expect(moves(json)).toEqual(['delete_file tool_not_granted → admitted assuming input_schema,resources']);
    expect(json.open).toMatchObject({ input_schema: 1, resources: 1 });
  });

  it('counts the calls whose narrowing it cannot re-decide, and never guesses them refused', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const { json } = await diff(log, { ...logged, args: { write_file: { properties: { content: { maxLength: 3 } } } } });
    expect(json.open.argument_narrowing).toBe(2);
    // The refused write never reached the resource check either.
    expect(moves(json)).toEqual(['write_file argument_not_permitted → admitted assuming argument_narrowing,resources']);
    // Dropping the narrowing on the root settles it: the long write would pass.
    const dropped = await diff(log, { ...logged, args: {} });
    expect(dropped.json.open.argument_narrowing).toBe(0);
    expect(moves(dropped.json)).toEqual(['write_file argument_not_permitted → admitted assuming resources']);
  });

  it('re-decides resources where the templates are the same: wider scopes settle, narrower ones are open', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const wider = await diff(log, { ...logged, scopes: ['fs:/'] });
    expect(wider.json.open.resources).toBe(1);
    expect(moves(wider.json)).toEqual(['read_file resource_not_permitted → admitted assuming resources']);
    const narrower = await diff(log, { ...logged, scopes: ['fs:/srv/a'] });
    expect(narrower.json.open.resources).toBe(3);
    expect(moves(narrower.json)).toEqual([]);
    const none = await diff(log, { ...logged, scopes: [] });
    expect(moves(none.json)).toEqual([]);
    expect(none.json.open.resources).toBe(3);
  });

  it('gives the same answer for the JSON Lines export of the log', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const jsonl = tmp.file('l.jsonl');
    expect(await runExport([log, '--output', jsonl], captureIo())).toBe(0);
    const candidate = { ...logged, tools: ['write_file'], resources: { write_file: ['fs:{path}'] } };
    expect((await diff(jsonl, candidate)).json).toEqual((await diff(log, candidate)).json);
  });

  it('with --grant compares one root grant; a delegated or unknown grant is a usage error', async () => {
    const log = tmp.file('l.sqlite');
    const first = await fixtureLog(log);
    const now = t0 + 10 * minute;
    const ledger = await withTools(log, () => now);
    const second = await ledger.issue({ tools: ['read_file'], expiresAt: t0 + 3_600_000, budget: logged.budget, resources: ['fs:/srv/'] });
    await ledger.invoke(second.token, 'read_file', { path: '/srv/z' });
    const child = await ledger.attenuate(first.token, { budget: { calls: 1 } });
    await ledger.close();
    if (child.status !== 'issued') throw new Error('attenuation refused');
    const candidate = { ...logged, tools: ['write_file'], resources: { write_file: ['fs:{path}'] } };
    const all = await diff(log, candidate);
    expect(all.json.grants).toEqual([first.grantId, second.grantId]);
    expect(moves(all.json)).toHaveLength(4);
    const one = await diff(log, candidate, ['--grant', second.grantId]);
    expect(one.json.grants).toEqual([second.grantId]);
    expect(moves(one.json)).toEqual(['read_file admitted → tool_not_granted']);
    expect((await diff(log, candidate, ['--grant', child.grantId])).code).toBe(2);
    expect((await diff(log, candidate, ['--grant', 'g_missing'])).code).toBe(2);
  });

  it("re-decides a child grant against the candidate parent: one it would not allow is gone, and so are its calls", async () => {
    const log = tmp.file('l.sqlite');
    const { token } = await fixtureLog(log);
    let now = t0 + 10 * minute;
    const ledger = await withTools(log, () => now);
    const child = await ledger.attenuate(token, { budget: { calls: 3 } });
    if (child.status !== 'issued') throw new Error('attenuation refused');
    await ledger.invoke(child.token, 'read_file', { path: '/srv/a' });
    now += minute;
    await ledger.close();
    // The candidate's 5 calls leave 2 after the log's 3 admissions: less than the 3 the child asked for.
    const { json } = await diff(log, { ...logged, budget: { calls: 5, inputBytes: 10_000 } });
    expect(moves(json)).toEqual(['read_file admitted → unknown_token']);
  });

  it('says where the candidate could not be issued (a tool the log did not have then), leaving its calls out (exit 1)', async () => {
    const log = tmp.file('l.sqlite');
    const { grantId } = await fixtureLog(log);
    const { code, json } = await diff(log, { ...logged, tools: [...logged.tools, 'no_such_tool'], resources: { ...logged.resources, no_such_tool: [] } });
    expect(code).toBe(1);
    expect(json).toMatchObject({ ok: false, grants: [], calls: 0, changes: [], refused: [{ seq: 4, grantId, message: expect.stringMatching(/no_such_tool.*not registered/) }] });
  });

  it('refuses a log that does not verify, and a candidate that does not parse (exit 2)', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const bad = await diff(log, { ...logged, scopes: ['fs:/a/../'] });
    expect(bad.code).toBe(2);
    expect(bad.stderr.join('\n')).toMatch(/policy scopes\[0\]/);
    tamper(log, "UPDATE events SET body = replace(body, '\"calls\":10', '\"calls\":99') WHERE seq = 4", { dropTriggers: true });
    const tampered = await diff(log, logged);
    expect(tampered.code).toBe(2);
    expect(tampered.stderr.join('\n')).toMatch(/does not verify/);
  });

  it('prints a readable report naming the rules it could not re-decide', async () => {
    const log = tmp.file('l.sqlite');
    await fixtureLog(log);
    const file = tmp.file('candidate.json');
    fs.writeFileSync(file, JSON.stringify({ ...logged, args: { write_file: { properties: { content: { maxLength: 3 } } } } }));
    const io = captureIo();
    expect(await runPolicy(['diff', log, '--policy', file], io)).toBe(1);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/1 grant\(s\); 6 call\(s\) re-decided/);
    expect(text).toMatch(/seq 11 write_file \(c_[^)]+\): argument_not_permitted → admitted \(if it passes argument_narrowing, resources\)/);
    expect(text).toMatch(/argument narrowing: 2 call\(s\)/);
  });
});
