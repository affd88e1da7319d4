import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { sqliteTempDir } from '../support/sqliteFiles';

// examples/approvals/payments.mjs as docs/approvals.md runs it: the large payment waits until
// `atc approve` (or `atc deny`) in another process decides it.

const root = path.join(__dirname, '..', '..');
const example = path.join(root, 'examples/approvals/payments.mjs');
const main = path.join(root, 'dist/src/cli/main.js');

async function runExample(file: string, decision: 'approve' | 'deny'): Promise<{ small: string; large: string; paid: string[]; verified: boolean }> {
  const child = spawn(process.execPath, [example, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let last = '';
  for await (const line of lines) {
    const waiting = /approve (a_[0-9a-f]{32}) --ledger/.exec(line);
    if (waiting !== null) await promisify(execFile)(process.execPath, [main, decision, waiting[1] as string, '--ledger', file, '--by', 'alice']);
    last = line;
  }
  return JSON.parse(last) as { small: string; large: string; paid: string[]; verified: boolean };
}

describe('examples/approvals/payments.mjs', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('pays 40 at once and 250 once a person approves it from another process', async () => {
    await expect(runExample(tmp.file('approve.sqlite'), 'approve')).resolves.toEqual({ small: 'completed', large: 'completed', paid: ['40 to bob', '250 to carol'], verified: true });
  }, 60_000);

  it('never pays 250 when the person denies it', async () => {
    await expect(runExample(tmp.file('deny.sqlite'), 'deny')).resolves.toEqual({ small: 'completed', large: 'approval_denied', paid: ['40 to bob'], verified: true });
  }, 60_000);
});
