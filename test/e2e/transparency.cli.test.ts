// atc keygen, checkpoint, prove, verify-proof and verify --checkpoint: outputs and exit codes.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { runCheckpoint } from '../../src/cli/commands/checkpoint';
import { runExport } from '../../src/cli/commands/export';
import { runKeygen } from '../../src/cli/commands/keygen';
import { runProve } from '../../src/cli/commands/prove';
import { runVerify } from '../../src/cli/commands/verify';
import { runVerifyProof } from '../../src/cli/commands/verifyProof';
import { merkleHasher, nodeCrypto, parseVerifierKey, rootOfEventHashes, verifyCheckpoint } from '../../src/transparency';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

async function logOf(file: string, calls: number): Promise<LedgerEvent[]> {
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: { i: { type: 'number' } } }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: 100_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', { i });
  const events = [...ledger.events()];
  await ledger.close();
  return events;
}

/** Runs a CLI function with captured output: its exit code and what it printed. */
async function cli(run: (args: string[], io: ReturnType<typeof captureIo>) => Promise<number>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await run(args, io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

const keyFile = tmp.file('log.key');
let vkey = '';
const log = tmp.file('log.sqlite');
let events: LedgerEvent[] = [];
const checkpointFile = tmp.file('log.checkpoint');

beforeAll(async () => {
  events = await logOf(log, 10); // 22 events
  const keygen = await cli(runKeygen, '--origin', 'example.com/ledger', '--out', keyFile);
  expect(keygen.code).toBe(0);
  vkey = keygen.out;
  const checkpoint = await cli(runCheckpoint, log, '--key', keyFile);
  expect(checkpoint.code).toBe(0);
  writeFileSync(checkpointFile, `${checkpoint.out}\n`);
});

describe('atc keygen', () => {
  test('writes the private key with mode 0600 and prints the verifier key for its origin', () => {
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8')).toMatch(/^PRIVATE\+KEY\+example\.com\/ledger\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}\n$/);
    const parsed = parseVerifierKey(nodeCrypto, vkey);
    expect(parsed.ok && parsed.key.name).toBe('example.com/ledger');
  });

  test('never overwrites a key file, and needs an origin without spaces or plus', async () => {
    expect((await cli(runKeygen, '--origin', 'example.com/ledger', '--out', keyFile)).code).toBe(2);
    expect((await cli(runKeygen, '--origin', 'a b', '--out', tmp.file('other.key'))).code).toBe(2);
    expect((await cli(runKeygen, '--out', tmp.file('other.key'))).code).toBe(2);
  });
});

describe('atc checkpoint', () => {
  test("prints a checkpoint of the log's head signed by the key, with the root of its tree", () => {
    const text = readFileSync(checkpointFile, 'utf8');
    const key = parseVerifierKey(nodeCrypto, vkey);
    if (!key.ok) throw new Error(key.message);
    const verified = verifyCheckpoint(nodeCrypto, text, key.key);
    expect(verified).toMatchObject({ ok: true, checkpoint: { origin: 'example.com/ledger', size: 22 } });
    const expected = rootOfEventHashes(merkleHasher(nodeCrypto), events.map((e) => e.hash)).root;
    expect(verified.ok && Buffer.from(verified.checkpoint.root).equals(Buffer.from(expected))).toBe(true);
    expect(text.split('\n').slice(0, 4)).toEqual(['example.com/ledger', '22', Buffer.from(expected).toString('base64'), '']);
  });

  test('works on a JSON Lines export and gives the same checkpoint body', async () => {
    const jsonl = tmp.file('log.jsonl');
    expect((await cli(runExport, log, '--output', jsonl)).code).toBe(0);
    const fromJsonl = await cli(runCheckpoint, jsonl, '--key', keyFile);
    expect(fromJsonl.out.split('\n\n')[0]).toBe(readFileSync(checkpointFile, 'utf8').split('\n\n')[0]);
  });

  test('exits 2 for a missing log or key', async () => {
    expect((await cli(runCheckpoint, tmp.file('missing.sqlite'), '--key', keyFile)).code).toBe(2);
    expect((await cli(runCheckpoint, log, '--key', tmp.file('missing.key'))).code).toBe(2);
  });
});

describe('atc prove and atc verify-proof', () => {
  const proofFile = tmp.file('seq5.proof');
  beforeAll(async () => {
    const proved = await cli(runProve, log, '--seq', '5', '--checkpoint', checkpointFile);
    expect(proved.code).toBe(0);
    writeFileSync(proofFile, `${proved.out}\n`);
  });

  test('the proof is a C2SP tlog-proof: header, the event hash as extra, index seq − 1, hashes, the checkpoint', () => {
    const text = readFileSync(proofFile, 'utf8');
    const lines = text.split('\n');
    expect(lines[0]).toBe('c2sp.org/tlog-proof@v1');
    expect(lines[1]).toBe(`extra ${Buffer.from(events[4]?.hash as string, 'hex').toString('base64')}`);
    expect(lines[2]).toBe('index 4');
    expect(text.endsWith(readFileSync(checkpointFile, 'utf8'))).toBe(true);
  });

  test('verifies with only the verifier key (exit 0), also against the event itself', async () => {
    const ok = await cli(runVerifyProof, proofFile, '--vkey', vkey);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toContain(`valid: event seq 5 (hash ${events[4]?.hash})`);
    const vkeyFile = tmp.file('log.vkey');
    writeFileSync(vkeyFile, `${vkey}\n`);
    const eventFile = tmp.file('event5.json');
    writeFileSync(eventFile, JSON.stringify(events[4]));
    expect((await cli(runVerifyProof, proofFile, '--vkey', `@${vkeyFile}`, '--event', eventFile)).code).toBe(0);
    writeFileSync(eventFile, JSON.stringify(events[5]));
    expect((await cli(runVerifyProof, proofFile, '--vkey', vkey, '--event', eventFile)).code).toBe(1);
  });

  test('exits 1 for a wrong key, a flipped bit in a proof hash, another leaf or another index', async () => {
    const other = tmp.file('other.key');
    const otherVkey = (await cli(runKeygen, '--origin', 'example.com/ledger', '--out', other)).out;
    expect((await cli(runVerifyProof, proofFile, '--vkey', otherVkey)).code).toBe(1);
    const text = readFileSync(proofFile, 'utf8');
    const lines = text.split('\n');
    const hash = Buffer.from(lines[3] as string, 'base64');
    hash[0] = (hash[0] as number) ^ 1;
    const variants = [
      [...lines.slice(0, 3), hash.toString('base64'), ...lines.slice(4)].join('\n'),
      [lines[0], `extra ${Buffer.from(events[5]?.hash as string, 'hex').toString('base64')}`, ...lines.slice(2)].join('\n'),
      [lines[0], lines[1], 'index 5', ...lines.slice(3)].join('\n'),
      text.replace('\n22\n', '\n23\n'),
    ];
    for (const [i, variant] of variants.entries()) {
      const file = tmp.file(`bad${i}.proof`);
      writeFileSync(file, variant);
      expect((await cli(runVerifyProof, file, '--vkey', vkey)).code).toBe(1);
    }
  });

  test('exits 2 for an out-of-range seq or a checkpoint larger than the log', async () => {
    expect((await cli(runProve, log, '--seq', '23', '--checkpoint', checkpointFile)).code).toBe(2);
    expect((await cli(runProve, log, '--seq', '0', '--checkpoint', checkpointFile)).code).toBe(2);
    const short = tmp.file('short.sqlite');
    await logOf(short, 2);
    const result = await cli(runProve, short, '--seq', '1', '--checkpoint', checkpointFile);
    expect(result.code).toBe(2);
    expect(result.err).toContain('the checkpoint is at size 22');
  });

  test('exits 1 when the checkpoint is not of this log', async () => {
    const other = tmp.file('otherlog.sqlite');
    await logOf(other, 12);
    expect((await cli(runProve, other, '--seq', '1', '--checkpoint', checkpointFile)).code).toBe(1);
  });
});

/** The verdict lines a run printed, stdout and stderr together. */
const verdicts = (run: { out: string; err: string }): string[] => `${run.out}\n${run.err}`.split('\n').filter((l) => /^(verified|NOT VERIFIED)/.test(l));

describe('atc verify <log> --checkpoint', () => {
  test('exit 0 for the checkpoint’s log and for an extension of it', async () => {
    const same = await cli(runVerify, log, '--checkpoint', checkpointFile, '--vkey', vkey);
    expect(same.code).toBe(0);
    expect(same.out).toContain('the same log');
    expect(verdicts(same)).toEqual([expect.stringMatching(/^verified: head seq \d+ hash [0-9a-f]{64}, consistent with checkpoint /)]);
    const extended = tmp.file('extended.sqlite');
    copyFileSync(log, extended);
    const ledger = createLedger({ store: sqliteStore({ path: extended }) });
    await ledger.revoke(events[1]?.type === 'grant.issued' ? (events[1] as { grantId: string }).grantId : '');
    await ledger.close();
    const result = await cli(runVerify, extended, '--checkpoint', checkpointFile, '--vkey', vkey);
    expect(result.code).toBe(0);
    expect(result.out).toContain('an extension of it');
  });

  test('exit 1 for a log rolled back before the checkpoint, or forked', async () => {
    const short = tmp.file('rolledback.sqlite');
    await logOf(short, 3);
    const rolledBack = await cli(runVerify, short, '--checkpoint', checkpointFile, '--vkey', vkey);
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.err).toMatch(/truncated or rolled back/);
    const forked = tmp.file('forked.sqlite');
    await logOf(forked, 10);
    const result = await cli(runVerify, forked, '--checkpoint', checkpointFile, '--vkey', vkey);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/rewritten or forked/);
    // One verdict: the log itself verifies, but "verified" must not be printed before the failure.
    expect(verdicts(rolledBack)).toEqual([expect.stringMatching(/^NOT VERIFIED: the log is not consistent with checkpoint/)]);
    expect(verdicts(result)).toEqual([expect.stringMatching(/^NOT VERIFIED: the log is not consistent with checkpoint/)]);
  });

  test('exit 1 when the checkpoint is not signed by the given key; 2 without --vkey', async () => {
    const otherVkey = (await cli(runKeygen, '--origin', 'example.com/ledger', '--out', tmp.file('third.key'))).out;
    expect((await cli(runVerify, log, '--checkpoint', checkpointFile, '--vkey', otherVkey)).code).toBe(1);
    expect((await cli(runVerify, log, '--checkpoint', checkpointFile)).code).toBe(2);
  });
});

test('the built atc binary runs keygen, checkpoint, prove and verify-proof end to end', () => {
  const main = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');
  const run = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
  const key = tmp.file('bin.key');
  const made = run('keygen', '--origin', 'example.com/bin', '--out', key);
  expect(made.status).toBe(0);
  const cp = run('checkpoint', log, '--key', key);
  expect(cp.status).toBe(0);
  const cpFile = tmp.file('bin.checkpoint');
  writeFileSync(cpFile, cp.stdout);
  const proof = run('prove', log, '--seq', '22', '--checkpoint', cpFile);
  expect(proof.status).toBe(0);
  const proofFile = tmp.file('bin.proof');
  writeFileSync(proofFile, proof.stdout);
  expect(run('verify-proof', proofFile, '--vkey', made.stdout.trim()).status).toBe(0);
  expect(run('verify', log, '--checkpoint', cpFile, '--vkey', made.stdout.trim()).status).toBe(0);
});
