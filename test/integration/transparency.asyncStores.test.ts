// The transparency option on asynchronous stores (openLedger): the PostgreSQL store, and a test-only
// in-memory asynchronous store so the wiring is checked without a server. The publisher follows this
// ledger's events and other hosts' (folded before each command and by the periodic catch-up), and a
// reopened ledger refuses to start on a checkpoint newer than, or inconsistent with, its log.
import { LedgerError, openLedger, type Ledger, type LedgerEvent, type LedgerOptions } from '../../src';
import { postgresStore } from '../../src/postgres';
import { checkpointPublisher, fileCheckpointSink, generateSignerKey, merkleHasher, nodeCrypto, rootOfEventHashes, type PublishedCheckpoint } from '../../src/transparency';
import { AsyncMemoryStore } from '../support/asyncMemoryStore';
import { describePg, freshSchema, url } from '../support/pgTest';
import { writeFileSync } from 'node:fs';
import { runCheckpoint } from '../../src/cli/commands/checkpoint';
import { runKeygen } from '../../src/cli/commands/keygen';
import { runProve } from '../../src/cli/commands/prove';
import { runVerify } from '../../src/cli/commands/verify';
import { runVerifyProof } from '../../src/cli/commands/verifyProof';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

jest.setTimeout(60_000);
const hasher = merkleHasher(nodeCrypto);
const key = generateSignerKey(nodeCrypto, 'example.com/ledger');
const hour = 3_600_000;

const attached = new WeakSet<Ledger>();

/** Attaches the tool once per ledger (an event only when the log lacks it), issues a grant, makes `calls` calls. */
async function drive(ledger: Ledger, calls: number): Promise<void> {
  if (!attached.has(ledger)) await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object' }, run: () => null });
  attached.add(ledger);
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: 100_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', {});
}

function collector(): { readonly published: PublishedCheckpoint[]; readonly sink: (p: PublishedCheckpoint) => void } {
  const published: PublishedCheckpoint[] = [];
  return { published, sink: (p) => void published.push(p) };
}

const rootHex = (events: readonly LedgerEvent[], size: number): string => Buffer.from(rootOfEventHashes(hasher, events.slice(0, size).map((e) => e.hash)).root).toString('hex');
const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? new Uint8Array(0)).toString('hex');

/** The same behaviour on every asynchronous store: `store(name)` opens the log called `name`. */
function asyncStoreSuite(open: (name: string) => LedgerOptions['store']): void {
  test('publishes checkpoints of the log, including events another host appended', async () => {
    const { published, sink } = collector();
    const a = await openLedger({ store: open('shared'), transparency: checkpointPublisher({ key, sink, everyEvents: 5 }) });
    const b = await openLedger({ store: open('shared') });
    await drive(a, 2); // 6 events: a checkpoint once 5 are appended
    await drive(b, 3); // 7 more, by the other host
    await drive(a, 1); // a folds b's events before deciding (a checkpoint at 13), then 3 of its own
    const events = a.events();
    await b.close();
    await a.close();
    expect(events).toHaveLength(16);
    // At 5 (this host's events), then whenever 5 more were folded (b's events reach a before its next
    // command, or earlier in pieces by the periodic catch-up: where depends on timing), and at close;
    // every one the tree of the whole log at its size, b's events included.
    const sizes = published.map((p) => p.checkpoint.size);
    expect(sizes[0]).toBe(5);
    expect(sizes.at(-1)).toBe(16);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < sizes.length - 1; i++) expect((sizes[i] as number) - (sizes[i - 1] as number)).toBeGreaterThanOrEqual(5);
    for (const p of published) expect(hex(p.checkpoint.root)).toBe(rootHex(events, p.checkpoint.size));
  });

  test('a reopened ledger refuses to start on a checkpoint newer than its log (rolled back)', async () => {
    const { published, sink } = collector();
    const longer = await openLedger({ store: open('long'), transparency: checkpointPublisher({ key, sink, everyEvents: 100 }) });
    await drive(longer, 10); // 22 events, a checkpoint at close
    await longer.close();
    const shorter = await openLedger({ store: open('short') });
    await drive(shorter, 4); // 10 events
    await shorter.close();
    const checkpoint = published.at(-1)?.note as string;
    await expect(openLedger({ store: open('short'), transparency: checkpointPublisher({ key, sink: () => undefined, everyEvents: 100, checkpoint }) })).rejects.toThrow(
      expect.objectContaining({ name: 'LedgerError', code: 'invalid_log', message: expect.stringContaining('newer than the log') }) as unknown as Error,
    );
    // Its own log opens with it.
    const same = await openLedger({ store: open('long'), transparency: checkpointPublisher({ key, sink: () => undefined, everyEvents: 100, checkpoint }) });
    await same.close();
  });

  test('a reopened ledger refuses to start on a checkpoint inconsistent with its log (forked)', async () => {
    const { published, sink } = collector();
    const first = await openLedger({ store: open('fork-a'), transparency: checkpointPublisher({ key, sink, everyEvents: 10 }) });
    await drive(first, 4); // 10 events: a checkpoint at 10
    await first.close();
    const other = await openLedger({ store: open('fork-b') });
    await drive(other, 4); // the same shape, other grant ids and tokens: another log
    await other.close();
    const checkpoint = published[0]?.note as string;
    const refused = openLedger({ store: open('fork-b'), transparency: checkpointPublisher({ key, sink: () => undefined, everyEvents: 10, checkpoint }) });
    await expect(refused).rejects.toThrow(LedgerError);
    await expect(refused).rejects.toThrow(/rewritten or forked/);
  });

  test("a reopened ledger checks its log against the file sink's latest checkpoint", async () => {
    const tmp = sqliteTempDir();
    try {
      const sinkFile = tmp.file('latest.checkpoint');
      const first = await openLedger({ store: open('sink-a'), transparency: checkpointPublisher({ key, sink: fileCheckpointSink(sinkFile), everyEvents: 4 }) });
      await drive(first, 3);
      await first.close();
      const other = await openLedger({ store: open('sink-b') });
      await drive(other, 1);
      await other.close();
      await expect(openLedger({ store: open('sink-b'), transparency: checkpointPublisher({ key, sink: fileCheckpointSink(sinkFile), everyEvents: 4 }) })).rejects.toThrow(/newer than the log/);
      const again = await openLedger({ store: open('sink-a'), transparency: checkpointPublisher({ key, sink: fileCheckpointSink(sinkFile), everyEvents: 4 }) });
      await drive(again, 1);
      await again.close();
    } finally {
      tmp.cleanup();
    }
  });
}

describe('the transparency option on an asynchronous in-memory store', () => {
  const logs = new Map<string, LedgerEvent[]>();
  asyncStoreSuite((name) => {
    if (!logs.has(name)) logs.set(name, []);
    return new AsyncMemoryStore(logs.get(name));
  });
});

describePg('the transparency option on the PostgreSQL store', () => {
  const schemas = new Map<string, string>();
  asyncStoreSuite((name) => {
    if (!schemas.has(name)) schemas.set(name, freshSchema('tl'));
    return postgresStore({ connectionString: url(), schema: schemas.get(name) as string });
  });
});

describePg('atc checkpoint, prove and verify --checkpoint on a postgres:// log', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  async function cli(run: (args: string[], io: ReturnType<typeof captureIo>) => Promise<number>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const io = captureIo();
    const code = await run(args, io);
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
  }

  test('sign, prove and check a PostgreSQL log as a SQLite one; exit 1 for another log', async () => {
    const schema = freshSchema('tlcli');
    const ledger = await openLedger({ store: postgresStore({ connectionString: url(), schema }) });
    await drive(ledger, 3); // 8 events
    const events = ledger.events();
    await ledger.close();
    const target = `${url()}?schema=${schema}`;
    const keyFile = tmp.file('pg.key');
    const vkey = (await cli(runKeygen, '--origin', 'example.com/pg', '--out', keyFile)).out;
    const signed = await cli(runCheckpoint, target, '--key', keyFile);
    expect(signed).toMatchObject({ code: 0 });
    expect(signed.out.split('\n').slice(0, 3)).toEqual(['example.com/pg', '8', Buffer.from(rootOfEventHashes(hasher, events.map((e) => e.hash)).root).toString('base64')]);
    const checkpointFile = tmp.file('pg.checkpoint');
    writeFileSync(checkpointFile, `${signed.out}\n`);
    const proved = await cli(runProve, target, '--seq', '3', '--checkpoint', checkpointFile);
    expect(proved.code).toBe(0);
    const proofFile = tmp.file('pg.proof');
    writeFileSync(proofFile, `${proved.out}\n`);
    expect((await cli(runVerifyProof, proofFile, '--vkey', vkey)).code).toBe(0);
    expect((await cli(runVerify, target, '--checkpoint', checkpointFile, '--vkey', vkey)).code).toBe(0);
    // Another PostgreSQL log of the same length is not the checkpoint's.
    const otherSchema = freshSchema('tlcli');
    const other = await openLedger({ store: postgresStore({ connectionString: url(), schema: otherSchema }) });
    await drive(other, 3);
    await other.close();
    const forked = await cli(runVerify, `${url()}?schema=${otherSchema}`, '--checkpoint', checkpointFile, '--vkey', vkey);
    expect(forked.code).toBe(1);
    expect(forked.err).toMatch(/NOT VERIFIED: the log is not consistent with checkpoint/);
    expect((await cli(runProve, `${url()}?schema=${otherSchema}`, '--seq', '3', '--checkpoint', checkpointFile)).code).toBe(1);
  });
});
