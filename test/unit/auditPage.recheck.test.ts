// The page's sweep (ChainVerifier.recheck): events the page verified before, re-read from the log as
// it is now. An edit, a rewrite with fresh hashes, a deletion or a truncation of an already-verified
// event becomes the first bad seq; an intact log stays verified; an earlier bad seq wins.
import { canonicalJson, genesisHash, sealEvent, type EventPayload, type LedgerEvent } from '../../src';
import { ChainVerifier, parseEvent, webCryptoSha256 } from '../../src/web/page/chainVerifier';
import type { ReceivedEvent } from '../../src/web/page/logLines';
import { CheckpointWatcher } from '../../src/web/page/checkpoint';
import { formatCheckpointBody } from '../../src/transparency/checkpoint';
import { rootOfEventHashes } from '../../src/transparency/eventLeaves';
import { merkleHasher } from '../../src/transparency/merkleHasher';
import { nodeCrypto } from '../../src/transparency/nodeCrypto';
import { formatVerifierKey, generateSignerKey, signNote, verifierKeyOf } from '../../src/transparency/noteKeys';

const sha256 = webCryptoSha256() as NonNullable<ReturnType<typeof webCryptoSha256>>;
const scope = { tools: ['t'], args: {}, resources: [], notBefore: 0, expiresAt: 10_000, budget: { calls: 3, inputBytes: 100 } };

function chain(payloads: readonly EventPayload[], start = { seq: 0, hash: genesisHash }): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  let head = start;
  for (const payload of payloads) {
    const event = sealEvent(payload, 1_000 + head.seq, head);
    events.push(event);
    head = { seq: event.seq, hash: event.hash };
  }
  return events;
}

const payloads: EventPayload[] = [
  { type: 'tool.registered', tool: 't', inputSchema: { type: 'object' } },
  { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope },
  { type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 7 } },
  { type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' },
  { type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 't', reason: 'tool_not_granted', inputBytes: 2 },
  { type: 'call.admitted', callId: 'c3', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 9 } },
];
const log = chain(payloads);
const rows = (events: readonly LedgerEvent[]): ReceivedEvent[] => events.map((e) => ({ seq: e.seq, text: canonicalJson(e) }));

async function verified(): Promise<ChainVerifier> {
  const verifier = new ChainVerifier(sha256);
  const status = await verifier.push(rows(log).map((received) => ({ received, parsed: parseEvent(received) })));
  expect(status.verifiedThrough).toBe(6);
  return verifier;
}

describe('ChainVerifier.recheck', () => {
  it('keeps an intact log verified, page by page', async () => {
    const verifier = await verified();
    await verifier.recheck(0, rows(log).slice(0, 4), 4);
    const status = await verifier.recheck(4, rows(log).slice(4), 4);
    expect(status.firstBad).toBeUndefined();
    expect(status.verifiedThrough).toBe(6);
  });

  it('reports a stored body edited after it was verified as the first bad seq', async () => {
    const verifier = await verified();
    const now = rows(log);
    now[2] = { seq: 3, text: (now[2]?.text as string).replace('"calls":1', '"calls":0') };
    const status = await verifier.recheck(0, now, 500);
    expect(status.firstBad).toEqual({ seq: 3, problem: expect.stringMatching(/changed since this page verified it/) as unknown as string });
    expect(status.verifiedThrough).toBe(2);
    expect(status.hashes).toEqual(log.slice(0, 2).map((e) => e.hash));
  });

  it('reports a rewrite that recomputed every hash from seq 4 on (a chain that verifies by itself)', async () => {
    const verifier = await verified();
    const rewritten = [...log.slice(0, 3), ...chain([{ type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 'u' }, ...payloads.slice(4)], { seq: 3, hash: (log[2] as LedgerEvent).hash })];
    const status = await verifier.recheck(0, rows(rewritten), 500);
    expect(status.firstBad?.seq).toBe(4);
    expect(status.verifiedThrough).toBe(3);
  });

  it('reports an event deleted from the middle, and a log truncated at its end', async () => {
    const middle = await verified();
    expect((await middle.recheck(0, rows([...log.slice(0, 2), ...log.slice(3)]), 500)).firstBad).toEqual({ seq: 3, problem: expect.stringMatching(/gone from the log/) as unknown as string });
    const end = await verified();
    const status = await end.recheck(0, rows(log.slice(0, 5)), 500);
    expect(status.firstBad).toEqual({ seq: 6, problem: expect.stringMatching(/truncated or rolled back/) as unknown as string });
    expect(status.verifiedThrough).toBe(5);
  });

  it('does not take a full page as the end of the log', async () => {
    const verifier = await verified();
    expect((await verifier.recheck(0, rows(log.slice(0, 3)), 3)).firstBad).toBeUndefined();
  });

  it('keeps an earlier bad seq when a later one turns bad, and moves to an earlier one', async () => {
    const verifier = await verified();
    await verifier.recheck(0, rows(log.slice(0, 4)), 500); // 5 and 6 gone
    expect(verifier.status().firstBad?.seq).toBe(5);
    const now = rows(log);
    now[1] = { seq: 2, text: undefined }; // withheld by the server now
    expect((await verifier.recheck(0, now, 500)).firstBad?.seq).toBe(2);
    expect((await verifier.recheck(0, rows(log.slice(0, 3)), 500)).firstBad?.seq).toBe(2);
    expect(verifier.status().verifiedThrough).toBe(1);
  });

  it('stops verifying the live stream once an already-verified event turned bad', async () => {
    const verifier = await verified();
    await verifier.recheck(0, rows(log.slice(0, 5)), 500);
    const next = chain([{ type: 'call.completed', callId: 'c3', grantId: 'g1', tool: 't' }], { seq: 6, hash: (log[5] as LedgerEvent).hash });
    const status = await verifier.push(rows(next).map((received) => ({ received, parsed: parseEvent(received) })));
    expect(status.verifiedThrough).toBe(5);
    expect(status.firstBad?.seq).toBe(6);
  });
});

describe('a checkpoint the page found consistent', () => {
  it('turns inconsistent when an event inside its tree turns bad afterwards', async () => {
    const key = generateSignerKey(nodeCrypto, 'example.com/live');
    const note = signNote(nodeCrypto, key, formatCheckpointBody({ origin: key.name, size: 6, root: rootOfEventHashes(merkleHasher(nodeCrypto), log.map((e) => e.hash)).root }));
    const watcher = new CheckpointWatcher(note, formatVerifierKey(verifierKeyOf(key)), nodeCrypto);
    const verifier = await verified();
    expect(watcher.advance(verifier.status().hashes, false).state).toBe('consistent');
    const status = await verifier.recheck(0, rows(log.slice(0, 5)), 500);
    expect(watcher.advance(status.hashes, true)).toEqual({ state: 'inconsistent', message: expect.stringMatching(/seq 6 of its tree changed after this page checked it/) as unknown as string });
    const earlier = await verifier.recheck(0, rows(log.slice(0, 2)), 500);
    expect(watcher.advance(earlier.hashes, true).message).toMatch(/seq 3 of its tree changed/);
  });
});
