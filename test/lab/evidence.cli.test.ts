import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LedgerEvent } from '../../src';
import { runVerify } from '../../src/cli/commands/verify';
import type { CliIo } from '../../src/cli/io';
import { runReproduce } from '../../experiments/reproduce/main';

const root = path.resolve(__dirname, '..', '..');
const cli = path.join(root, 'dist/src/cli/main.js');

function capture(): CliIo & { text: () => string } {
  const lines: string[] = [];
  return { out: (t) => void lines.push(t), err: (t) => void lines.push(t), text: () => lines.join('\n') };
}

let dir: string;
let evidencePath: string;
let reproduceRun: ReturnType<typeof spawnSync>;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'atc-evidence-'));
  evidencePath = path.join(dir, 'run.json');
  // End to end, as a newcomer runs it: `npm run reproduce -- --output F` (the compiled reproducer, built by `pretest`).
  reproduceRun = spawnSync('npm', ['run', '--silent', 'reproduce', '--', '--output', evidencePath], { cwd: root, encoding: 'utf8' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run reproduce and atc verify from the command line', () => {
  it('reproduce prints a line per stage and the table, writes the file, and verify then says verified', () => {
    expect(reproduceRun.status).toBe(0);
    expect(reproduceRun.stdout).toMatch(/\[6\/6\] revocation with abortInFlight/);
    expect(reproduceRun.stdout).toMatch(/\| Seed's 25 cases: adversarial or budget-exhausted +\| 22\/22 rejected/);
    expect(reproduceRun.stdout).toMatch(/\| Added since: adversarial or budget-exhausted +\| 4\/4 rejected/);
    const verified = spawnSync(process.execPath, [cli, 'verify', evidencePath], { cwd: root, encoding: 'utf8' });
    expect(verified.status).toBe(0);
    expect(verified.stdout).toMatch(/checked {2}logs\.sequential/);
    expect(verified.stdout.trim().endsWith('verified')).toBe(true);
  });

  it('verify exits 1 on an edited copy and prints the problem with the event seq', async () => {
    const doc = JSON.parse(readFileSync(evidencePath, 'utf8')) as { logs: { concurrencyBytes: LedgerEvent[] } };
    const i = doc.logs.concurrencyBytes.findIndex((e) => e.type === 'call.admitted');
    doc.logs.concurrencyBytes[i] = { ...(doc.logs.concurrencyBytes[i] as LedgerEvent), tool: 'notes.delete' } as LedgerEvent;
    const edited = path.join(dir, 'edited.json');
    writeFileSync(edited, JSON.stringify(doc));
    const io = capture();
    expect(await runVerify([edited], io)).toBe(1);
    expect(io.text()).toContain(`logs.concurrencyBytes seq ${i + 1}: hash:`);
    expect(io.text()).toMatch(/NOT VERIFIED: \d+ problem/);
  });

  it('verify exits 1 on a file that is not JSON', async () => {
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{"schemaVersion": 1,');
    expect(await runVerify([broken], capture())).toBe(1);
  });

  it('verify exits 2 on a missing file or bad usage', async () => {
    expect(await runVerify([path.join(dir, 'missing.json')], capture())).toBe(2);
    expect(await runVerify([], capture())).toBe(2);
  });

  it('verify hands .sqlite and .db paths to SQLite log verification, not to the evidence reader', async () => {
    for (const name of ['log.sqlite', 'log.DB']) {
      const io = capture();
      expect(await runVerify([path.join(dir, name)], io)).not.toBe(0); // no such file
      expect(io.text()).toMatch(/sqlite/i);
      expect(io.text()).not.toMatch(/is not JSON|cannot read/);
    }
  });

  it('reproduce exits 2 on an unknown argument', async () => {
    const io = capture();
    expect(await runReproduce(['--fast'], io)).toBe(2);
    expect(io.text()).toContain('reproduce: unknown option --fast');
  });

  it('the stored results/reference.json verifies and was produced from a clean, committed tree', async () => {
    const reference = path.join(root, 'results/reference.json');
    const io = capture();
    expect(await runVerify([reference], io)).toBe(0);
    const doc = JSON.parse(readFileSync(reference, 'utf8')) as { revision: { commit: string; dirty: boolean } };
    expect(doc.revision.dirty).toBe(false);
    expect(execFileSync('git', ['cat-file', '-t', doc.revision.commit], { cwd: root, encoding: 'utf8' }).trim()).toBe('commit');
  });
});
