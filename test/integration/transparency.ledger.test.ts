// The transparency option of createLedger: a checkpoint publisher following the log (memory and
// SQLite stores), its cadence, its frontier kept with the SQLite snapshot, and its refusals.
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createLedger, LedgerError, memoryStore, sqliteStore, type EventStore, type Ledger, type LedgerEvent } from '../../src';
import {
  checkpointPublisher,
  fileCheckpointSink,
  formatSignerKey,
  generateSignerKey,
  merkleHasher,
  nodeCrypto,
  rootOfEventHashes,
  verifierKeyOf,
  verifyCheckpoint,
  verifyConsistency,
  type CheckpointPublisherOptions,
  type PublishedCheckpoint,
} from '../../src/transparency';
import type { FollowedLog } from '../../src/stream/ports/logFollower';
import { sqliteTempDir, tamper } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;
const hasher = merkleHasher(nodeCrypto);
const key = generateSignerKey(nodeCrypto, 'example.com/ledger');
const keyText = formatSignerKey(key);
const vkey = verifierKeyOf(key);

/** Registers a tool, issues a grant and makes `calls` calls (2 events each): 2 + 2·calls events. */
async function drive(ledger: Ledger, calls: number): Promise<void> {
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: { i: { type: 'number' } } }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 10_000, inputBytes: 1_000_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', { i });
}

function collector(): { readonly published: PublishedCheckpoint[]; sink: (p: PublishedCheckpoint) => void } {
  const published: PublishedCheckpoint[] = [];
  return { published, sink: (p) => void published.push(p) };
}

/** Reopens the ledger at `file` with a publisher and drives it: nothing may be signed, the error says why. */
async function expectReopenRefusesToSign(file: string): Promise<void> {
  const errors: Error[] = [];
  const { published, sink } = collector();
  const second = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }), transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 2, onError: (e) => void errors.push(e) }) });
  await drive(second, 3);
  await second.close();
  expect(published).toEqual([]);
  expect(errors[0]?.message).toMatch(/not consistent with the checkpoint signed at size/);
}

function rootOf(events: readonly LedgerEvent[], size: number): string {
  return Buffer.from(rootOfEventHashes(hasher, events.slice(0, size).map((e) => e.hash)).root).toString('hex');
}

describe('the ledger with a checkpoint publisher', () => {
  test('publishes a signed checkpoint every N events, each the root of the log at its size', async () => {
    const { published, sink } = collector();
    const ledger = createLedger({ transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 10 }) });
    await drive(ledger, 30); // 62 events
    const events = ledger.events();
    await ledger.close();
    expect(published.map((p) => p.checkpoint.size)).toEqual([10, 20, 30, 40, 50, 60, 62]); // the last one at close
    for (const p of published) {
      const verified = verifyCheckpoint(nodeCrypto, p.note, vkey);
      expect(verified.ok).toBe(true);
      expect(Buffer.from(p.checkpoint.root).toString('hex')).toBe(rootOf(events, p.checkpoint.size));
      expect(p.note.startsWith(`example.com/ledger\n${p.checkpoint.size}\n${Buffer.from(p.checkpoint.root).toString('base64')}\n\n\u2014 example.com/ledger `)).toBe(true);
    }
  });

  test('gives with each checkpoint a consistency proof from the one before that verifies', async () => {
    const { published, sink } = collector();
    const ledger = createLedger({ transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 7 }) });
    await drive(ledger, 20);
    await ledger.close();
    expect(published[0]?.previous).toBeUndefined();
    for (const p of published.slice(1)) {
      const prev = p.previous as { size: number; root: Uint8Array };
      expect(verifyConsistency(hasher, prev.size, p.checkpoint.size, p.consistencyProof, prev.root, p.checkpoint.root)).toBe(true);
    }
  });

  test('publishes every T ms only when the log grew (injected timer)', async () => {
    const { published, sink } = collector();
    let tick: () => void = () => undefined;
    const ledger = createLedger({ transparency: checkpointPublisher({ key: keyText, sink, everyMs: 1_000, setTimer: (fn) => ((tick = fn), () => undefined) }) });
    tick();
    expect(published.map((p) => p.checkpoint.size)).toEqual([0]); // the empty log's checkpoint
    expect(Buffer.from(published[0]?.checkpoint.root as Uint8Array).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    tick();
    expect(published).toHaveLength(1);
    await drive(ledger, 2);
    tick();
    tick();
    expect(published.map((p) => p.checkpoint.size)).toEqual([0, 6]);
    await ledger.close();
    expect(published).toHaveLength(2);
  });

  test('follows events other writers append to a shared SQLite log', async () => {
    const file = tmp.file('shared.sqlite');
    const { published, sink } = collector();
    const a = createLedger({ store: sqliteStore({ path: file }), transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 1_000 }) });
    const b = createLedger({ store: sqliteStore({ path: file }) });
    await drive(b, 5);
    await drive(a, 5);
    const events = a.events();
    await b.close();
    await a.close();
    expect(published.at(-1)?.checkpoint.size).toBe(events.length);
    expect(Buffer.from(published.at(-1)?.checkpoint.root as Uint8Array).toString('hex')).toBe(rootOf(events, events.length));
  });
});

/** A publisher whose open() records which event hashes it had to read. */
function watched(options: CheckpointPublisherOptions): { publisher: ReturnType<typeof checkpointPublisher>; reads: [number, number][]; savedText: () => string | undefined } {
  const publisher = checkpointPublisher(options);
  const reads: [number, number][] = [];
  let saved: string | undefined;
  const open = publisher.open.bind(publisher);
  publisher.open = (log: FollowedLog) => {
    saved = log.snapshot?.text;
    open({ ...log, hashes: (after, through) => (reads.push([after, through]), log.hashes(after, through)) });
  };
  return { publisher, reads, savedText: () => saved };
}

describe('reopening a SQLite ledger with a publisher', () => {
  test('resumes the tree from the frontier saved with the snapshot, reading only the events after it', async () => {
    const file = tmp.file('resume.sqlite');
    const first = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 10 }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 1_000_000 }) });
    await drive(first, 40);
    await first.close();
    const { published, sink } = collector();
    const store = sqliteStore({ path: file, snapshotEvery: 10 });
    const { publisher, reads, savedText } = watched({ key: keyText, sink, everyEvents: 1_000_000 });
    const second = createLedger({ store, transparency: publisher });
    const snapshotSeq = store.openedFromSnapshotSeq as number;
    expect(snapshotSeq).toBeGreaterThan(50);
    expect(savedText()).toContain('"head"');
    expect(reads.every(([after]) => after >= snapshotSeq)).toBe(true);
    const events = second.events();
    await second.close();
    expect(Buffer.from(published.at(-1)?.checkpoint.root as Uint8Array).toString('hex')).toBe(rootOf(events, events.length));
  });

  test('rebuilds the tree from the events when there is no snapshot', async () => {
    const file = tmp.file('nosnapshot.sqlite');
    const first = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }) });
    await drive(first, 10);
    await first.close();
    const { published, sink } = collector();
    const { publisher, reads, savedText } = watched({ key: keyText, sink, everyEvents: 1_000_000 });
    const second = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }), transparency: publisher });
    expect(savedText()).toBeUndefined();
    expect(reads[0]).toEqual([0, 22]);
    const events = second.events();
    await second.close();
    expect(Buffer.from(published[0]?.checkpoint.root as Uint8Array).toString('hex')).toBe(rootOf(events, 22));
  });

  test('refuses to start when the configured checkpoint is newer than the log (rolled back)', async () => {
    const file = tmp.file('rollback.sqlite');
    const old = tmp.file('rollback-old.sqlite');
    const { published, sink } = collector();
    const ledger = createLedger({ store: sqliteStore({ path: file }), transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 10 }) });
    await drive(ledger, 4); // 10 events: checkpoint at 10
    await ledger.close();
    copyFileSync(file, old);
    const again = createLedger({ store: sqliteStore({ path: file }), transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 10 }) });
    await drive(again, 5); // 22 events: checkpoint at 20 and 22
    await again.close();
    const newest = published.at(-1)?.note as string;
    expect(() => createLedger({ store: sqliteStore({ path: old }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 10, checkpoint: newest }) })).toThrow(
      expect.objectContaining({ name: 'LedgerError', code: 'invalid_log', message: expect.stringContaining('newer than the log') }) as unknown as Error,
    );
  });

  test('refuses to start when the configured checkpoint is inconsistent with the log (forked)', async () => {
    const { published, sink } = collector();
    const a = createLedger({ store: sqliteStore({ path: tmp.file('fork-a.sqlite') }), transparency: checkpointPublisher({ key: keyText, sink, everyEvents: 10 }) });
    await drive(a, 10);
    await a.close();
    const b = createLedger({ store: sqliteStore({ path: tmp.file('fork-b.sqlite') }) });
    await drive(b, 10); // same shape, other grant ids and tokens: another log
    await b.close();
    const checkpoint = published[0]?.note as string;
    expect(() => createLedger({ store: sqliteStore({ path: tmp.file('fork-b.sqlite') }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 10, checkpoint }) })).toThrow(/rewritten or forked/);
    // The log it came from opens with it.
    const ok = createLedger({ store: sqliteStore({ path: tmp.file('fork-a.sqlite') }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 10, checkpoint }) });
    await ok.close();
  });

  test("checks the log against a file sink's latest checkpoint on open", async () => {
    const file = tmp.file('sinkfile.sqlite');
    const sinkFile = tmp.file('sinkfile.checkpoint');
    const ledger = createLedger({ store: sqliteStore({ path: file }), transparency: checkpointPublisher({ key: keyText, sink: fileCheckpointSink(sinkFile), everyEvents: 5 }) });
    await drive(ledger, 4);
    await ledger.close();
    expect(existsSync(sinkFile)).toBe(true);
    expect(verifyCheckpoint(nodeCrypto, readFileSync(sinkFile, 'utf8'), vkey)).toMatchObject({ ok: true, checkpoint: { size: 10 } });
    // Another log pointed at the same sink file refuses to start.
    const other = tmp.file('sinkfile-other.sqlite');
    const seed = createLedger({ store: sqliteStore({ path: other }) });
    await drive(seed, 6);
    await seed.close();
    expect(() => createLedger({ store: sqliteStore({ path: other }), transparency: checkpointPublisher({ key: keyText, sink: fileCheckpointSink(sinkFile), everyEvents: 5 }) })).toThrow(LedgerError);
  });

  test('a configured checkpoint from another key is refused unless its key is given', async () => {
    const store: EventStore = memoryStore();
    const other = generateSignerKey(nodeCrypto, 'example.com/ledger');
    const { published, sink } = collector();
    const ledger = createLedger({ store, transparency: checkpointPublisher({ key: other, sink, everyEvents: 2 }) });
    await drive(ledger, 1);
    await ledger.close();
    const checkpoint = published[0]?.note as string;
    expect(() => createLedger({ store, transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 2, checkpoint }) })).toThrow(/does not verify/);
    const withKey = createLedger({ store, transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 2, checkpoint, checkpointKey: `${verifierKeyOf(other).name}+${verifierKeyOf(other).keyId.toString(16).padStart(8, '0')}+${Buffer.concat([Buffer.from([1]), Buffer.from(other.publicKey)]).toString('base64')}` }) });
    await withKey.close();
  });

  test('never signs a checkpoint inconsistent with the previous one (a corrupted saved frontier)', async () => {
    const file = tmp.file('corrupt.sqlite');
    const first = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 5 }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 6 }) });
    await drive(first, 10);
    await first.close();
    // Replace the head frontier saved with the newest snapshot by one of another tree of that size.
    const db = new Database(file);
    const row = db.prepare('SELECT seq, follower FROM snapshots ORDER BY seq DESC LIMIT 1').get() as { seq: number; follower: string };
    db.close();
    const saved = JSON.parse(row.follower) as { head: { size: number; nodes: string[] } };
    saved.head.nodes = saved.head.nodes.map(() => Buffer.alloc(32, 7).toString('base64'));
    tamper(file, `UPDATE snapshots SET follower = '${JSON.stringify(saved)}' WHERE seq = ${row.seq}`);
    await expectReopenRefusesToSign(file);
  });

  test('never signs a wrong checkpoint from a saved frontier corrupted only after the last checkpoint', async () => {
    // Such nodes would enter both the next consistency proof and the head root, which would then
    // agree: the reopen compares the saved head with the tree it replays from the checkpoint.
    const file = tmp.file('corrupt-tail.sqlite');
    const first = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 7 }), transparency: checkpointPublisher({ key: keyText, sink: () => undefined, everyEvents: 8 }) });
    await drive(first, 10); // 22 events: checkpoints at 8, 16 (and 22 at close), snapshots every 7
    await first.close();
    const db = new Database(file);
    const rows = db.prepare('SELECT seq, follower FROM snapshots ORDER BY seq DESC').all() as { seq: number; follower: string }[];
    db.close();
    // The newest snapshot whose head has a node lying wholly after its previous checkpoint.
    const target = rows
      .map((row) => ({ row, saved: JSON.parse(row.follower) as { head: { size: number; nodes: string[] }; previous: string } }))
      .find(({ saved }) => {
        const previousSize = Number(saved.previous.split('\n')[1]);
        const lastWidth = saved.head.size & -saved.head.size; // the smallest subtree, the last node
        return saved.head.size - lastWidth >= previousSize;
      });
    expect(target).toBeDefined();
    const { row, saved } = target as NonNullable<typeof target>;
    saved.head.nodes[saved.head.nodes.length - 1] = Buffer.alloc(32, 7).toString('base64');
    tamper(file, `UPDATE snapshots SET follower = '${JSON.stringify(saved)}' WHERE seq = ${row.seq}`);
    tamper(file, `DELETE FROM snapshots WHERE seq > ${row.seq}`);
    await expectReopenRefusesToSign(file);
  });
});
