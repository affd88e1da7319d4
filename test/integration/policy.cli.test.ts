import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { createLedger, sqliteStore } from '../../src';
import { runPolicy } from '../../src/cli/commands/policy';
import { casesMax } from '../../src/policy/policyCases';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';
import { atc, httpServer, loggingServer, toolCallsSeen } from '../support/mcpProxy';

// `atc policy check` and `atc policy test` end to end: tools from a log, from an upstream over
// stdio (test/fixtures/mcpLoggingServer.js, which records every message it receives) or over
// Streamable HTTP, or none; exit codes 0 / 1 / 2.
const now = Date.parse('2026-06-01T12:00:00Z');
const str = { type: 'string' };
let tmp: ReturnType<typeof sqliteTempDir>;
beforeEach(() => (tmp = sqliteTempDir()));
afterEach(() => tmp.cleanup());

const json = (name: string, value: unknown): string => {
  const file = tmp.file(name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};
const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
  const io = captureIo();
  const code = await runPolicy(args, io, () => now);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
};

async function logWithNotes(file: string): Promise<void> {
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'write_note', inputSchema: { type: 'object', properties: { path: str, text: str }, required: ['path', 'text'] }, run: () => 'x' });
  await ledger.registerTool({ name: 'read_notes', inputSchema: { type: 'object', properties: { paths: { type: 'array', items: str } } }, run: () => 'x' });
  await ledger.close();
}

// The logging server's tools: echo, write_note, read_notes, slow, progress, fail, delete_all.
const notes = {
  tools: ['write_note', 'read_notes'],
  args: { write_note: { properties: { text: { maxLength: 10 } } } },
  resources: { write_note: ['notes:/{path}'], read_notes: ['notes:/{paths[]}'] },
  scopes: ['notes:/drafts/'],
  expiresIn: '1h',
  budget: { calls: 3, inputBytes: 1000 },
};
const cases = [
  { tool: 'write_note', args: { path: 'drafts/a', text: 'hi' }, expect: 'admitted' },
  { name: 'too long', tool: 'write_note', args: { path: 'drafts/a', text: 'far too long a note' }, expect: 'argument_not_permitted' },
  { tool: 'read_notes', args: { paths: ['drafts/a', 'private/b'] }, expect: 'resource_not_permitted' },
  { tool: 'delete_all', args: {}, expect: 'tool_not_granted' },
  { tool: 'write_note', args: { path: 'drafts/b', text: 'x' }, at: now + 3_600_000, expect: 'expired' },
];

describe('atc policy check', () => {
  it('checks against the tools a log registered: exit 0 clean, 1 with each problem as file#pointer', async () => {
    const log = tmp.file('l.sqlite');
    await logWithNotes(log);
    expect((await run(['check', json('p.json', notes), '--ledger', log])).code).toBe(0);
    const bad = await run(['check', json('bad.json', { ...notes, tools: [...notes.tools, 'echo'], args: { write_note: { properties: { txt: { maxLength: 1 } } } } }), '--ledger', log]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('bad.json#/tools/2 unknown_tool: "echo" is not a tool');
    expect(bad.out).toContain('bad.json#/args/write_note/properties/txt undeclared_property');
  });

  it('checks against an upstream over stdio and over Streamable HTTP, with --json output', async () => {
    const serverLog = tmp.file('server.jsonl');
    const policy = json('p.json', { ...notes, tools: [...notes.tools, 'echo'], resources: { ...notes.resources, echo: ['notes:/{txt}'] } });
    const stdio = await run(['check', policy, '--json', '--', process.execPath, loggingServer, '--log', serverLog]);
    expect(stdio.code).toBe(1);
    expect(JSON.parse(stdio.out)).toEqual({ ok: false, tools: 'upstream', problems: [{ pointer: '/resources/echo/0', code: 'undeclared_argument', message: expect.stringMatching(/names argument "txt"/) }] });
    const server = await httpServer(tmp.file('http.jsonl'));
    try {
      const http = await run(['check', policy, '--url', server.url, '--json']);
      expect(JSON.parse(http.out)).toEqual(JSON.parse(stdio.out));
    } finally {
      server.stop();
    }
  });

  it('without a tool list runs the rules that need none and says which it skipped', async () => {
    const r = await run(['check', json('p.json', { ...notes, tools: [...notes.tools, 'no_such_tool'], budget: { calls: 0, inputBytes: 1 } })]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('#/budget/calls zero_budget');
    expect(r.out).not.toContain('unknown_tool');
    expect(r.err).toMatch(/no tool list/);
  });

  it('reports a file that is not JSON as a problem, and an unreadable one or bad options as usage (exit 2)', async () => {
    const notJson = await run(['check', json('p.json', '{ "tools": [')]);
    expect(notJson.code).toBe(1);
    expect(notJson.out).toContain('p.json# malformed');
    expect((await run(['check', tmp.file('missing.json')])).code).toBe(2);
    expect((await run(['check'])).code).toBe(2);
    expect((await run(['check', 'p.json', '--url', 'http://127.0.0.1:1/mcp', '--ledger', 'l.sqlite'])).code).toBe(2);
    expect((await run(['check', 'p.json', '--frobnicate'])).code).toBe(2);
    expect((await run(['frob'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
    const help = await run(['check', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('usage: atc policy check ');
    expect(help.out).toContain('--ledger <log>');
    const group = await run(['--help']);
    expect(group.code).toBe(0);
    expect(group.out).toContain('atc policy diff');
    const typo = await run(['chek', 'p.json']);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('did you mean check?');
  });
});

describe('atc policy test', () => {
  it('decides each case in a scratch ledger against the upstream’s schemas; no call reaches the upstream', async () => {
    const serverLog = tmp.file('server.jsonl');
    const r = await run(['test', json('p.json', notes), json('cases.json', cases), '--', process.execPath, loggingServer, '--log', serverLog]);
    expect(r.err).toBe('');
    expect(r.out.split('\n')).toEqual([
      expect.stringMatching(/^ok {3}#0 write_note at 2026-06-01T12:00:00.000Z: expected admitted, got admitted$/),
      expect.stringMatching(/^ok {3}#1 "too long" write_note .*expected argument_not_permitted, got argument_not_permitted$/),
      expect.stringMatching(/^ok {3}#2 read_notes .*got resource_not_permitted$/),
      expect.stringMatching(/^ok {3}#3 delete_all .*got tool_not_granted$/),
      expect.stringMatching(/^ok {3}#4 write_note at 2026-06-01T13:00:00.000Z: expected expired, got expired$/),
      '5 of 5 case(s) as expected',
    ]);
    expect(r.code).toBe(0);
    expect(toolCallsSeen(serverLog)).toEqual([]);
  });

  it('exits 1 on a mismatch, printing expected and actual', async () => {
    const r = await run(['test', json('p.json', notes), json('cases.json', [{ ...cases[1], expect: 'admitted' }]), '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({ ok: false, results: [{ index: 0, name: 'too long', tool: 'write_note', at: now, expected: 'admitted', actual: 'argument_not_permitted', ok: false }] });
  });

  it('issues the grant at the first case time, even when that is after now', async () => {
    const later = now + 30 * 86_400_000;
    const r = await run(['test', json('p.json', notes), json('cases.json', [{ ...cases[0], at: later }, { ...cases[0], at: later + 3_599_999 }, { ...cases[0], at: later + 3_600_000, expect: 'expired' }])]);
    expect(r.out).toContain('3 of 3 case(s) as expected');
  });

  it('with no tool list each tool takes any arguments object', async () => {
    const r = await run(['test', json('p.json', { ...notes, args: {} }), json('cases.json', [{ tool: 'write_note', args: { path: 'drafts/a', anything: [1, 2] }, expect: 'admitted' }, { tool: 'other', args: {}, expect: 'tool_not_granted' }])]);
    expect(r.out).toContain('2 of 2 case(s) as expected');
    expect(r.code).toBe(0);
  });

  it('reads the schemas from a log and leaves that log as it was', async () => {
    const log = tmp.file('l.sqlite');
    await logWithNotes(log);
    const digest = (): string => createHash('sha256').update(fs.readFileSync(log)).digest('hex');
    const before = digest();
    const r = await run(['test', json('p.json', notes), json('cases.json', cases.filter((c) => c.tool !== 'delete_all')), '--ledger', log]);
    expect(r.out).toContain('4 of 4 case(s) as expected');
    expect(digest()).toBe(before);
  });

  it('refuses a hostile cases file with exit 2, naming the case and field, echoing no value', async () => {
    const policy = json('p.json', notes);
    const refused = async (value: unknown): Promise<string> => {
      const r = await run(['test', policy, json('cases.json', value)]);
      expect(r.code).toBe(2);
      return r.err;
    };
    expect(await refused('[{')).toMatch(/not JSON/);
    expect(await refused({ tool: 'x' })).toMatch(/cases: must be array/);
    expect(await refused([{ tool: 'write_note', args: {}, expect: 'secret-value-xyz' }])).toMatch(/cases\[0\]\.expect: must be "admitted" or a reject reason/);
    expect(await refused([{ tool: 'write_note', args: {}, expect: 'secret-value-xyz' }])).not.toContain('secret-value-xyz');
    expect(await refused([{ tool: 'write_note', args: [], expect: 'admitted' }])).toMatch(/cases\[0\]\.args/);
    expect(await refused([{ tool: 'write_note', args: {}, expect: 'admitted', extra: 1 }])).toMatch(/cases\[0\]\.extra: is not a case field/);
    expect(await refused([{ tool: 'a', args: {}, at: now, expect: 'admitted' }, { tool: 'a', args: {}, at: now - 1, expect: 'admitted' }])).toMatch(/cases\[1\]\.at: .*time must not go back/);
    expect(await refused(Array.from({ length: casesMax + 1 }, () => ({ tool: 'a', args: {}, expect: 'admitted' })))).toMatch(/must NOT have more than 10000 items/);
    expect(await refused(`[${' '.repeat(8 * 1_048_576)}]`)).toMatch(/larger than/);
  });

  it('prints names from the files with control characters escaped, never as terminal escapes', async () => {
    const r = await run(['test', json('p.json', notes), json('cases.json', [{ name: 'n\u009b', tool: 'x\u001b[2J', args: {}, expect: 'admitted' }])]);
    expect(r.out).toContain('x\\x1b[2J');
    expect(r.out).toContain('"n\\x9b"');
    expect(r.out).not.toMatch(/[\u001b\u009b]/);
    const log = tmp.file('l.sqlite');
    await logWithNotes(log);
    const c = await run(['check', json('p2.json', { ...notes, args: { write_note: { properties: { 'a\u009bb': { maxLength: 1 } } } } }), '--ledger', log]);
    expect(c.out).toContain('/args/write_note/properties/a\\x9bb undeclared_property');
    expect(c.out).not.toContain('\u009b');
  });

  it('the built CLI runs it: atc policy test exits 1 on a mismatch, 0 when all match', () => {
    const policy = json('p.json', notes);
    expect(atc(['policy', 'test', policy, json('ok.json', [cases[0]])]).status).toBe(0);
    const failed = atc(['policy', 'test', policy, json('bad.json', [{ ...cases[0], expect: 'expired' }])]);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toMatch(/FAIL #0 write_note .*expected expired, got admitted/);
  });
});
