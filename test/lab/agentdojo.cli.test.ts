import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAgentdojoCommand } from '../../experiments/agentdojo/main';
import type { AgentdojoResults } from '../../experiments/agentdojo/experiment';

function captureIo(): { io: { out(t: string): void; err(t: string): void }; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out, err };
}

describe('npm run agentdojo', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-agentdojo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the results file, prints the table and exits 0 when every log verifies', async () => {
    const file = path.join(dir, 'agentdojo.json');
    const { io, out, err } = captureIo();
    expect(await runAgentdojoCommand(['--output', file], io)).toBe(0);
    expect(err).toEqual([]);
    const results = JSON.parse(readFileSync(file, 'utf8')) as AgentdojoResults;
    expect(Object.values(results.logs).every((l) => l?.verify.ok === true)).toBe(true);
    expect(out.join('\n')).toMatch(/\| \*\*all\*\* \| A \|/);
  });

  it('refuses an unknown argument with exit 2, pointing to its help', async () => {
    const { io, err } = captureIo();
    expect(await runAgentdojoCommand(['--bogus'], io)).toBe(2);
    expect(err).toEqual(['agentdojo: unknown option --bogus', "run 'npm run agentdojo -- --help' for its options"]);
  });

  it('prints its help, from the same option table as the atc commands, with exit 0', async () => {
    const { io, out } = captureIo();
    expect(await runAgentdojoCommand(['--help'], io)).toBe(0);
    expect(out.join('\n')).toMatch(/^usage: npm run agentdojo -- \[--output <file>\] \[--data <dir>\]/);
  });
});
