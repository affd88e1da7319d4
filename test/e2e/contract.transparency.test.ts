// The contract's "Transparency" and "Audit view" sections (/work/shared/contract.md, second wave), name
// by name, as a user meets them: each `atc` line run through the built binary with exactly the flags
// the contract names, the formats it fixes checked on what comes out, and the library names the
// docs promise loaded from the built package by its npm name (a scratch project linking it).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { makeConsumerProject, removeConsumerProject } from '../support/consumerProject';
import { sqliteTempDir, tamper } from '../support/sqliteFiles';

const root = path.resolve(__dirname, '..', '..');
const main = path.join(root, 'dist', 'src', 'cli', 'main.js');
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const atc = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
const leafHash = (hex: string): Buffer => createHash('sha256').update(Buffer.concat([Buffer.from([0]), Buffer.from(hex, 'hex')])).digest();
const nodeHash = (l: Buffer, r: Buffer): Buffer => createHash('sha256').update(Buffer.concat([Buffer.from([1]), l, r])).digest();

/** RFC 9162 MTH over the event hashes, written from the contract's wording (leaf, node, split). */
function mth(hashes: readonly string[]): Buffer {
  if (hashes.length === 0) return createHash('sha256').digest();
  if (hashes.length === 1) return leafHash(hashes[0] as string);
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return nodeHash(mth(hashes.slice(0, k)), mth(hashes.slice(k)));
}

async function logOf(file: string, calls: number): Promise<LedgerEvent[]> {
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object' }, run: () => 'ok' });
  const { token } = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 3_600_000, budget: { calls: 100, inputBytes: 10_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'notes.write', {});
  const events = [...ledger.events()];
  await ledger.close();
  return events;
}

const log = tmp.file('contract.sqlite');
const keyFile = tmp.file('contract.key');
const vkeyFile = tmp.file('contract.vkey');
const checkpointFile = tmp.file('contract.checkpoint');
let events: LedgerEvent[] = [];
let vkey = '';

beforeAll(async () => {
  events = await logOf(log, 5); // 12 events
});

describe('atc keygen --origin <name> --out <file.key>', () => {
  test('writes the private key (mode 0600) in the note key format and prints the verifier key', () => {
    const made = atc('keygen', '--origin', 'example.com/contract', '--out', keyFile);
    expect(made.status).toBe(0);
    vkey = made.stdout.trim();
    writeFileSync(vkeyFile, `${vkey}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8').trim()).toMatch(/^PRIVATE\+KEY\+example\.com\/contract\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
    expect(vkey).toMatch(/^example\.com\/contract\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
  });
});

describe('atc checkpoint <log> --key <file.key>', () => {
  test('prints a signed note whose body is exactly <origin>\\n<size>\\n<base64 root>\\n, the RFC 9162 root of the event hashes', () => {
    const signed = atc('checkpoint', log, '--key', keyFile);
    expect(signed.status).toBe(0);
    writeFileSync(checkpointFile, signed.stdout);
    const [body, signatures] = signed.stdout.split('\n\n');
    expect(`${body}\n`).toBe(`example.com/contract\n12\n${mth(events.map((e) => e.hash)).toString('base64')}\n`);
    expect(signatures?.startsWith('\u2014 example.com/contract ')).toBe(true);
  });

  test("an empty log's root is SHA-256 of nothing", async () => {
    const empty = tmp.file('empty.sqlite');
    await createLedger({ store: sqliteStore({ path: empty }) }).close();
    const signed = atc('checkpoint', empty, '--key', keyFile);
    expect(signed.status).toBe(0);
    expect(signed.stdout.split('\n').slice(0, 3)).toEqual(['example.com/contract', '0', '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=']);
  });
});

describe('atc prove <log> --seq N --checkpoint <file>', () => {
  test("prints a C2SP tlog-proof: index seq − 1, the event hash as extra, ending with the signed checkpoint", () => {
    const proved = atc('prove', log, '--seq', '3', '--checkpoint', checkpointFile);
    expect(proved.status).toBe(0);
    const lines = proved.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual(['c2sp.org/tlog-proof@v1', `extra ${b64((events[2] as LedgerEvent).hash)}`, 'index 2']);
    expect(proved.stdout.endsWith(readFileSync(checkpointFile, 'utf8'))).toBe(true);
    writeFileSync(tmp.file('contract.proof'), proved.stdout);
  });

  test('an out-of-range --seq, or a checkpoint larger than the log, exits 2 with a message', () => {
    for (const seq of ['0', '13']) {
      const out = atc('prove', log, '--seq', seq, '--checkpoint', checkpointFile);
      expect({ seq, status: out.status, message: out.stderr.length > 0 }).toEqual({ seq, status: 2, message: true });
    }
    const larger = atc('prove', shorterLog(tmp.file('shorter.sqlite')), '--seq', '1', '--checkpoint', checkpointFile);
    expect(larger.status).toBe(2);
    expect(larger.stderr).toMatch(/checkpoint/);
  });
});

/** A copy of the log with its last four events removed (a rollback), for the checks that need one. */
function shorterLog(file: string): string {
  copyFileSync(log, file);
  tamper(file, 'DELETE FROM snapshots; DELETE FROM events WHERE seq > 8;', { dropTriggers: true });
  return file;
}

describe('atc verify-proof <proof-file> --vkey <key|@file>', () => {
  test('exit 0 for a valid proof, with the key inline or as @file', () => {
    expect(atc('verify-proof', tmp.file('contract.proof'), '--vkey', vkey).status).toBe(0);
    expect(atc('verify-proof', tmp.file('contract.proof'), '--vkey', `@${vkeyFile}`).status).toBe(0);
  });

  test('exit 1 for a bad signature, proof or leaf; unknown signature lines are ignored', () => {
    const proof = readFileSync(tmp.file('contract.proof'), 'utf8');
    const other = atc('keygen', '--origin', 'example.com/contract', '--out', tmp.file('other.key')).stdout.trim();
    const withUnknown = `${proof}\u2014 witness.example ${Buffer.alloc(68, 1).toString('base64')}\n`;
    writeFileSync(tmp.file('unknown.proof'), withUnknown);
    expect(atc('verify-proof', tmp.file('unknown.proof'), '--vkey', vkey).status).toBe(0);
    expect(atc('verify-proof', tmp.file('contract.proof'), '--vkey', other).status).toBe(1); // no valid signature by --vkey
    const leafLine = proof.split('\n')[1] as string;
    writeFileSync(tmp.file('leaf.proof'), proof.replace(leafLine, `extra ${b64((events[3] as LedgerEvent).hash)}`));
    expect(atc('verify-proof', tmp.file('leaf.proof'), '--vkey', vkey).status).toBe(1);
    writeFileSync(tmp.file('index.proof'), proof.replace('\nindex 2\n', '\nindex 3\n'));
    expect(atc('verify-proof', tmp.file('index.proof'), '--vkey', vkey).status).toBe(1);
  });
});

describe('atc verify <log> --checkpoint <file> --vkey <key|@file>', () => {
  test("exit 0 for the checkpoint's log and an extension of it", async () => {
    expect(atc('verify', log, '--checkpoint', checkpointFile, '--vkey', vkey).status).toBe(0);
    const longer = tmp.file('longer.sqlite');
    copyFileSync(log, longer);
    const ledger = createLedger({ store: sqliteStore({ path: longer }) });
    await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object' }, run: () => 'ok' });
    await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 3_600_000, budget: { calls: 1, inputBytes: 10 } });
    await ledger.close();
    expect(atc('verify', longer, '--checkpoint', checkpointFile, '--vkey', `@${vkeyFile}`).status).toBe(0);
  });

  test('exit 1 for a log truncated or rolled back after the checkpoint, or another log', async () => {
    expect(atc('verify', shorterLog(tmp.file('rolledback.sqlite')), '--checkpoint', checkpointFile, '--vkey', vkey).status).toBe(1);
    const another = tmp.file('another.sqlite');
    await logOf(another, 5);
    expect(atc('verify', another, '--checkpoint', checkpointFile, '--vkey', vkey).status).toBe(1);
  });
});

describe('atc serve <log> [--port N] [--host 127.0.0.1]', () => {
  test('prints listening on http://HOST:PORT/', async () => {
    const child = spawn(process.execPath, [main, 'serve', log, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.split('\n')[0] as string);
        });
        child.on('exit', (code) => reject(new Error(`atc serve exited ${code}`)));
      });
      expect(line).toMatch(/^listening on http:\/\/127\.0\.0\.1:[1-9][0-9]*\/$/);
    } finally {
      child.kill();
    }
  });
});

describe('the library names docs/transparency.md gives, from the built package by its npm name', () => {
  const names = [
    'merkleHasher', 'rootOfEventHashes', 'CompactFrontier', 'MerkleTree', 'inclusionProof', 'consistencyProof', 'verifyInclusion', 'verifyConsistency',
    'rootFromInclusionProof', 'parseNote', 'verifyNote', 'parseVerifierKey', 'parseSignerKey', 'formatVerifierKey', 'formatSignerKey', 'noteKeyId',
    'parseCheckpointBody', 'formatCheckpointBody', 'verifyCheckpoint', 'parseTlogProof', 'formatTlogProof', 'proveEvent', 'proveEventInTree', 'verifyEventProof',
    'checkLogAgainstCheckpoint', 'cosignatureVerifier', 'cosignerVerifierKey', 'cosignatureLine', 'checkpointPublisher', 'fileCheckpointSink', 'nodeCrypto',
    'generateSignerKey', 'verifierKeyOf', 'signNote',
  ];
  // The names the docs' worked example imports from the root.
  const rootNames = ['checkpointPublisher', 'fileCheckpointSink', 'generateSignerKey', 'formatSignerKey', 'formatVerifierKey', 'verifierKeyOf', 'parseVerifierKey', 'nodeCrypto', 'proveEvent', 'verifyEventProof', 'checkLogAgainstCheckpoint', 'eventHash'];
  let project: string;
  beforeAll(() => {
    project = makeConsumerProject('atc-contract-');
  });
  afterAll(() => removeConsumerProject(project));

  test('agent-tool-capabilities/transparency exports each of them', () => {
    const script = `const m = require('agent-tool-capabilities/transparency'); console.log(JSON.stringify(${JSON.stringify(names)}.filter((k) => m[k] === undefined)))`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout) as string[]).toEqual([]);
  });

  test('the root exports the names the worked example uses', () => {
    const script = `const m = require('agent-tool-capabilities'); console.log(JSON.stringify(${JSON.stringify(rootNames)}.filter((k) => m[k] === undefined)))`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout) as string[]).toEqual([]);
  });
});
