import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson, createLedger, genesisHash, sealEvent, type EventPayload, type LedgerEvent } from '../../src';
import { ChainVerifier, parseEvent, webCryptoSha256 } from '../../src/web/page/chainVerifier';
import { formatCheckpointBody } from '../../src/transparency/checkpoint';
import { rootOfEventHashes } from '../../src/transparency/eventLeaves';
import { merkleHasher } from '../../src/transparency/merkleHasher';
import { nodeCrypto } from '../../src/transparency/nodeCrypto';
import { formatVerifierKey, generateSignerKey, signNote, verifierKeyOf } from '../../src/transparency/noteKeys';
import { CheckpointWatcher, leavesPerAdvanceMax } from '../../src/web/page/checkpoint';
import { filterFromQuery, matchesFilter, queryFromFilter } from '../../src/web/page/filters';
import { gaugesOf } from '../../src/web/page/gauges';
import { auditForest } from '../../src/web/page/forest';
import { parseDataLine } from '../../src/web/page/logLines';
import { bucketsMax, reasonSeries } from '../../src/web/page/reasonBuckets';
import { dataLine } from '../../src/web/server/eventStream';
import { AuditModel, leftText, windowText } from '../../src/web/page/auditModel';
import { manualClock } from '../support/fixtures';

const sha256 = webCryptoSha256() as NonNullable<ReturnType<typeof webCryptoSha256>>;
const budget = { calls: 3, inputBytes: 100 };
const scope = { tools: ['t'], args: {}, resources: [], notBefore: 0, expiresAt: 10_000, budget };

function chain(payloads: readonly EventPayload[]): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  let head = { seq: 0, hash: genesisHash };
  for (const payload of payloads) {
    const event = sealEvent(payload, 1_000 + events.length, head);
    events.push(event);
    head = { seq: event.seq, hash: event.hash };
  }
  return events;
}

const sampleLog = (): LedgerEvent[] =>
  chain([
    { type: 'tool.registered', tool: 't', inputSchema: { type: 'object' } },
    { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope },
    { type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 7 } },
    { type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 't' },
    { type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 't', reason: 'tool_not_granted', inputBytes: 2 },
    { type: 'call.admitted', callId: 'c3', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 9 } },
  ]);

async function verifyTexts(texts: readonly { seq: number; text: string | undefined }[]): ReturnType<ChainVerifier['status']> extends infer S ? Promise<S> : never {
  const verifier = new ChainVerifier(sha256);
  await verifier.push(texts.slice(0, 2).map((received) => ({ received, parsed: parseEvent(received) })));
  return verifier.push(texts.slice(2).map((received) => ({ received, parsed: parseEvent(received) })));
}

describe('the page re-checks the hash chain (ChainVerifier)', () => {
  it('verifies an intact log through its last seq', async () => {
    const status = await verifyTexts(sampleLog().map((e) => ({ seq: e.seq, text: canonicalJson(e) })));
    expect(status.firstBad).toBeUndefined();
    expect(status.verifiedThrough).toBe(6);
    expect(status.hashes).toEqual(sampleLog().map((e) => e.hash));
  });

  it('reports an edited stored body as the first bad seq, and verifies only what came before', async () => {
    const texts = sampleLog().map((e) => ({ seq: e.seq, text: canonicalJson(e) }));
    texts[2] = { seq: 3, text: (texts[2]?.text as string).replace('"calls":1', '"calls":0') };
    const status = await verifyTexts(texts);
    expect(status.firstBad?.seq).toBe(3);
    expect(status.firstBad?.problem).toMatch(/does not hash/);
    expect(status.verifiedThrough).toBe(2);
  });

  it('reports a resealed event whose prevHash no longer chains', async () => {
    const events = sampleLog();
    const forged = sealEvent({ type: 'call.completed', callId: 'cX', grantId: 'g1', tool: 't' }, 5, { seq: 3, hash: 'f'.repeat(64) });
    const texts = events.map((e) => ({ seq: e.seq, text: canonicalJson(e) }));
    texts[3] = { seq: 4, text: canonicalJson(forged) };
    expect((await verifyTexts(texts)).firstBad).toEqual({ seq: 4, problem: expect.stringMatching(/prevHash/) });
  });

  it('reports a dropped event at the seq that is missing', async () => {
    const texts = sampleLog().map((e) => ({ seq: e.seq, text: canonicalJson(e) }));
    texts.splice(3, 1);
    expect((await verifyTexts(texts)).firstBad?.seq).toBe(4);
  });

  it('reports a body that is not JSON, or was withheld, at its seq', async () => {
    const texts: { seq: number; text: string | undefined }[] = sampleLog().map((e) => ({ seq: e.seq, text: canonicalJson(e) }));
    texts[4] = { seq: 5, text: '{"seq":5,' };
    expect((await verifyTexts(texts)).firstBad).toEqual({ seq: 5, problem: expect.stringMatching(/not JSON/) });
    texts[4] = { seq: 5, text: undefined };
    expect((await verifyTexts(texts)).firstBad).toEqual({ seq: 5, problem: expect.stringMatching(/withheld/) });
  });
});

describe('the stream carries every stored body verbatim (dataLine / parseDataLine)', () => {
  it('round-trips any body text, line breaks and a leading ! included', () => {
    fc.assert(
      fc.property(fc.nat(), fc.string({ unit: 'binary' }), (seq, body) => {
        expect(parseDataLine(dataLine({ seq, body }))).toEqual({ seq, text: body });
      }),
    );
  });

  it('withholds a body over the bound, so the page reports its seq', () => {
    expect(parseDataLine(dataLine({ seq: 9, body: 'x'.repeat(1_048_577) }))).toEqual({ seq: 9, text: undefined });
  });
});

describe('filters in the URL', () => {
  it('round-trip through the query string and ignore unknown or malformed values', () => {
    const filter = { grant: 'g 1&x', tool: 'notes.write', decision: 'rejected' as const, reason: 'revoked' };
    expect(filterFromQuery(queryFromFilter(filter))).toEqual(filter);
    expect(filterFromQuery('?decision=maybe&other=1&tool=')).toEqual({});
    expect(queryFromFilter({})).toBe('');
  });

  it('combine with AND', () => {
    const row = { grantId: 'g1', tool: 't', decision: 'rejected' as const, reason: 'revoked' };
    expect(matchesFilter(row, { grant: 'g1', decision: 'rejected' })).toBe(true);
    expect(matchesFilter(row, { grant: 'g1', decision: 'admitted' })).toBe(false);
    expect(matchesFilter(row, { reason: 'expired' })).toBe(false);
  });
});

describe('budget gauges', () => {
  it('give one gauge per numeric budget field with its in-flight share', () => {
    expect(gaugesOf({ calls: 5, inputBytes: 100 }, { calls: 2, inputBytes: 40 }, { calls: 1, inputBytes: 9 })).toEqual([
      { key: 'calls', label: 'calls', limit: 5, used: 2, inFlight: 1 },
      { key: 'inputBytes', label: 'input bytes', limit: 100, used: 40, inFlight: 9 },
    ]);
  });

  it('take nested meters as they arrive, and skip the rate window, which is not an amount', () => {
    const gauges = gaugesOf({ calls: 5, inputBytes: 1, meters: { usd_micros: 5_000 }, rate: { calls: 2, windowMs: 1_000 } }, { calls: 0, inputBytes: 0, meters: { usd_micros: 1_200 } }, {});
    expect(gauges.map((g) => [g.key, g.used, g.limit])).toEqual([
      ['calls', 0, 5],
      ['inputBytes', 0, 1],
      ['meters.usd_micros', 1_200, 5_000],
    ]);
  });
});

describe('the grant tree (the core grantTree projection, labelled for the page)', () => {
  const modelOf = (events: readonly LedgerEvent[]): AuditModel => {
    const model = new AuditModel();
    for (const e of events) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    return model;
  };

  it('nests children under their parent and marks a subtree revoked by an ancestor apart from the revoked grant', async () => {
    const ledger = createLedger({ clock: () => 1_000 });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, run: () => null });
    const root = await ledger.issue({ tools: ['t'], expiresAt: 100_000, budget: { calls: 5, inputBytes: 100 } });
    const mid = await ledger.attenuate(root.token, { budget: { calls: 3 } });
    if (mid.status !== 'issued') throw new Error(mid.reason);
    const leaf = await ledger.attenuate(mid.token, { budget: { calls: 1 } });
    if (leaf.status !== 'issued') throw new Error(leaf.reason);
    await ledger.invoke(leaf.token, 't', {});
    await ledger.revoke(mid.grantId);
    const forest = auditForest(modelOf(ledger.events()), 2_000);
    expect(forest.roots.map((n) => n.grantId)).toEqual([root.grantId]);
    expect(forest.roots[0]?.children.map((n) => n.grantId)).toEqual([mid.grantId]);
    expect([root.grantId, mid.grantId, leaf.grantId].map((id) => forest.status.get(id))).toEqual(['active', 'revoked', 'revoked_by_ancestor']);
    // The leaf's call is counted on every ancestor by the core's fold.
    expect(forest.roots[0]?.usage.calls.used).toBe(1);
    expect(forest.unplaced).toEqual([]);
  });

  it('lists a grant whose parent is not in the log as unplaced instead of dropping it (a hostile log)', () => {
    const events = chain([
      { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope },
      { type: 'grant.issued', grantId: 'orphan', tokenDigest: 'b'.repeat(64), scope, parentGrantId: 'nowhere' } as unknown as EventPayload,
    ]);
    const forest = auditForest(modelOf(events), 0);
    expect(forest.roots.map((n) => n.grantId)).toEqual(['g1']);
    expect(forest.unplaced).toEqual(['orphan']);
  });

  it('shows an expired grant as expired', () => {
    const forest = auditForest(modelOf(chain([{ type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope }])), 10_000);
    expect(forest.status.get('g1')).toBe('expired');
  });
});

describe('rejection reasons over time', () => {
  it('counts rejections per reason per bucket, never more than bucketsMax buckets', () => {
    const series = reasonSeries([
      { at: 0, reason: 'revoked' },
      { at: 500, reason: 'revoked' },
      { at: 2_500, reason: 'expired' },
    ]);
    expect(series.bucketMs).toBe(1_000);
    expect(series.xs).toEqual([0, 1, 2]);
    expect(series.reasons).toEqual(['revoked', 'expired']);
    expect(series.counts).toEqual([
      [2, 0, 0],
      [0, 0, 1],
    ]);
    const wide = reasonSeries([{ at: 0, reason: 'r' }, { at: 400 * 86_400_000, reason: 'r' }]);
    expect(wide.xs.length).toBeLessThanOrEqual(bucketsMax);
    expect(wide.counts[0]?.reduce((a, b) => a + b, 0)).toBe(2);
  });
});

describe('the page model (AuditModel)', () => {
  it('folds with the core evolve: usage counts in-flight reservations, the settlement shows as the outcome', () => {
    const model = new AuditModel();
    for (const e of sampleLog()) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    const inFlight = model.inFlightByGrant().get('g1') ?? {};
    expect(model.gauges('g1', inFlight).map((g) => [g.key, g.used, g.inFlight])).toEqual([
      ['calls', 2, 1],
      ['inputBytes', 16, 9],
    ]);
    expect(model.decisions.map((d) => [d.seq, d.decision, model.outcomeOf(d)])).toEqual([
      [3, 'admitted', 'completed'],
      [5, 'rejected', null],
      [6, 'admitted', 'in flight'],
    ]);
    expect(model.rejections).toEqual([{ at: 1_004, reason: 'tool_not_granted' }]);
  });

  it('reads parentGrantId off grant.issued, for the tree', () => {
    const model = new AuditModel();
    const [child] = chain([{ type: 'grant.issued', grantId: 'g2', tokenDigest: 'b'.repeat(64), scope, parentGrantId: 'g1' } as unknown as EventPayload]);
    model.add(1, JSON.parse(canonicalJson(child)) as Record<string, unknown>, canonicalJson(child));
    expect(model.grants.get('g2')?.parentGrantId).toBe('g1');
  });
});

describe('checkpoint checks in the page (CheckpointWatcher over src/transparency)', () => {
  const hashes = sampleLog().map((e) => e.hash);
  const key = generateSignerKey(nodeCrypto, 'example.com/log');
  const vkey = formatVerifierKey(verifierKeyOf(key));
  const checkpointOf = (leaves: readonly string[], signer = key): string => {
    const { size, root } = rootOfEventHashes(merkleHasher(nodeCrypto), leaves);
    return signNote(nodeCrypto, signer, formatCheckpointBody({ origin: signer.name, size, root }));
  };

  it('says consistent when the signature is valid and the verified log extends the checkpoint', () => {
    const watcher = new CheckpointWatcher(checkpointOf(hashes.slice(0, 4)), vkey, nodeCrypto);
    expect(watcher.advance(hashes, false).state).toBe('consistent');
  });

  it('waits while the verified log is shorter than the checkpoint, then decides', () => {
    const watcher = new CheckpointWatcher(checkpointOf(hashes.slice(0, 4)), vkey, nodeCrypto);
    expect(watcher.advance(hashes.slice(0, 3), false).state).toBe('waiting');
    expect(watcher.hasWork(3)).toBe(false);
    expect(watcher.hasWork(4)).toBe(true);
    expect(watcher.advance(hashes.slice(0, 4), false).state).toBe('consistent');
  });

  it('says inconsistent for another history, or a chain that breaks before the checkpoint size', () => {
    const other = ['0'.repeat(64), ...hashes.slice(1)];
    expect(new CheckpointWatcher(checkpointOf(hashes.slice(0, 4)), vkey, nodeCrypto).advance(other, false).state).toBe('inconsistent');
    expect(new CheckpointWatcher(checkpointOf(hashes.slice(0, 4)), vkey, nodeCrypto).advance(hashes.slice(0, 2), true).state).toBe('inconsistent');
  });

  it('says bad_signature for a checkpoint signed by another key, malformed for garbage', () => {
    const stranger = generateSignerKey(nodeCrypto, 'example.com/log');
    expect(new CheckpointWatcher(checkpointOf(hashes, stranger), vkey, nodeCrypto).status().state).toBe('bad_signature');
    expect(new CheckpointWatcher('not a note', vkey, nodeCrypto).status().state).toBe('malformed');
    expect(new CheckpointWatcher(checkpointOf(hashes), 'not a key', nodeCrypto).status().state).toBe('malformed');
  });

  it('folds a long log in bounded steps (leavesPerAdvanceMax per call)', () => {
    const many = Array.from({ length: leavesPerAdvanceMax + 5 }, (_, i) => createHash('sha256').update(String(i)).digest('hex'));
    const watcher = new CheckpointWatcher(checkpointOf(many), vkey, nodeCrypto);
    expect(watcher.advance(many, false).state).toBe('waiting');
    expect(watcher.advance(many, false).state).toBe('consistent');
  });
});

describe('the rate-window gauge', () => {
  it('counts the admissions inside the window at the time given, of the window limit, and empties as the window slides', async () => {
    const clock = manualClock(1_000_000);
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 'echo', inputSchema: { type: 'object' }, run: () => null });
    const { grantId, token } = await ledger.issue({ tools: ['echo'], expiresAt: clock.now() + 3_600_000, budget: { calls: 10, inputBytes: 1_000, rate: { calls: 3, windowMs: 60_000 } } });
    await ledger.invoke(token, 'echo', {});
    clock.advance(10_000);
    await ledger.invoke(token, 'echo', {});
    const model = new AuditModel();
    for (const e of ledger.events()) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    const rate = (now?: number) => model.gauges(grantId, {}, now).find((g) => g.key === 'rate');
    expect(rate()).toMatchObject({ label: 'calls per 1 min', used: 2, limit: 3 }); // at the log's last event
    expect(rate(1_000_000 + 65_000)?.used).toBe(1);
    expect(rate(1_000_000 + 75_000)?.used).toBe(0);
    expect(model.rateWindows).toBe(true);
    expect(model.gauges(grantId, {}).map((g) => g.key)).toEqual(['calls', 'inputBytes', 'rate']);
    await ledger.close();
  });

  it('names the window in the largest whole unit', () => {
    expect([3_600_000, 60_000, 30_000, 1_500, 86_400_000].map(windowText)).toEqual(['1 h', '1 min', '30 s', '1500 ms', '1 d']);
  });
});


describe('the pending calls and their timeout countdown', () => {
  it('lists each grant\'s running calls with the time left until the deadline the core decided, counting down at the clock given', async () => {
    const clock = manualClock(1_000_000);
    const ledger = createLedger({ clock: clock.now, setTimer: () => () => undefined });
    const held: ((value: string) => void)[] = [];
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: () => new Promise<string>((resolve) => held.push(resolve)) });
    const expiresAt = clock.now() + 3_600_000;
    const timed = await ledger.issue({ tools: ['slow'], expiresAt, budget: { calls: 10, inputBytes: 1_000 }, callTimeoutMs: 30_000 });
    const untimed = await ledger.issue({ tools: ['slow'], expiresAt, budget: { calls: 10, inputBytes: 1_000 } });
    const child = await ledger.attenuate(timed.token, { budget: { calls: 2 } });
    if (child.status !== 'issued') throw new Error(child.reason);
    const running: Promise<unknown>[] = [];
    const start = async (token: string): Promise<void> => {
      const before = held.length;
      running.push(ledger.invoke(token, 'slow', {}));
      while (held.length === before) await new Promise((resolve) => setImmediate(resolve));
    };
    await start(timed.token); // admitted at 1_000_000
    clock.advance(2_000);
    await start(child.token); // at 1_002_000, the parent's 30 s along the chain
    await start(untimed.token);
    const model = new AuditModel();
    for (const e of ledger.events()) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    const left = (now: number, grantId: string) => model.pendingByGrant(now).get(grantId)?.map((c) => [c.tool, c.deadline, c.leftMs]);
    expect(left(1_005_000, timed.grantId)).toEqual([['slow', 1_030_000, 25_000]]);
    expect(left(1_005_000, child.grantId)).toEqual([['slow', 1_032_000, 27_000]]);
    expect(left(1_005_000, untimed.grantId)).toEqual([['slow', undefined, undefined]]);
    expect(left(1_029_500, timed.grantId)).toEqual([['slow', 1_030_000, 500]]);
    expect(left(1_031_000, timed.grantId)).toEqual([['slow', 1_030_000, 0]]); // due: the ledger's timer settles it
    expect(model.hasDeadlines()).toBe(true);
    for (const resolve of held.splice(0)) resolve('done');
    await Promise.all(running);
    for (const e of ledger.events().slice(model.lastSeq)) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    expect(model.pendingByGrant(1_005_000).size).toBe(0);
    expect(model.hasDeadlines()).toBe(false);
    await ledger.close();
  });

  it('lists a grant\'s calls soonest deadline first, calls without one last', () => {
    const model = new AuditModel();
    const events = chain([
      { type: 'tool.registered', tool: 't', inputSchema: { type: 'object' } },
      { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope },
      { type: 'call.admitted', callId: 'late', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 1 }, deadline: 9_000 },
      { type: 'call.admitted', callId: 'none', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 1 } },
      { type: 'call.admitted', callId: 'soon', grantId: 'g1', tool: 't', reserved: { calls: 1, inputBytes: 1 }, deadline: 5_000 },
    ]);
    for (const e of events) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
    expect(model.pendingByGrant(4_000).get('g1')?.map((c) => [c.callId, c.leftMs])).toEqual([['soon', 1_000], ['late', 5_000], ['none', undefined]]);
  });

  it('says the time left in whole seconds, rounded up, in the largest units', () => {
    expect([0, 1, 999, 1_000, 59_001, 60_000, 250_000, 3_600_000, 3_900_000].map(leftText)).toEqual(['0 s', '1 s', '1 s', '1 s', '1 min 0 s', '1 min 0 s', '4 min 10 s', '1 h 0 min', '1 h 5 min']);
  });
});
