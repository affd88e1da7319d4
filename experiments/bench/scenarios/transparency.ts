import { createHash } from 'node:crypto';
import {
  checkpointPublisher,
  CompactFrontier,
  eventLeaf,
  formatCheckpointBody,
  generateSignerKey,
  merkleHasher,
  MerkleTree,
  nodeCrypto,
  signNote,
  verifyConsistency,
  verifyInclusion,
} from '../../../src/transparency';
import { oursCall, oursLedger } from '../ours';
import { figures, interleaved, now, round, type Figures } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/** Times `count` runs of `op` one by one: per-op figures. */
function timed(count: number, op: (i: number) => void): Figures {
  const lat = new Float64Array(count);
  const t0 = now();
  for (let i = 0; i < count; i++) {
    const s = now();
    op(i);
    lat[i] = now() - s;
  }
  return figures(lat, now() - t0);
}

/** Deterministic pseudo-random indices (no Math.random: runs are comparable). */
function indices(count: number, below: number): number[] {
  let x = 0x9e3779b9;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % below;
  });
}

/**
 * Scenario 10: the transparency tree at 1,000,000 events. The incremental tree (compact frontier) per
 * appended event against the cost of an admitted call; a ledger with and without the publisher,
 * interleaved; checkpoint signing; inclusion proofs (generation from a MerkleTree, verification)
 * and consistency proofs across the whole log.
 */
export async function transparency(ctx: BenchContext): Promise<ScenarioResult> {
  const size = ctx.quick ? 100_000 : 1_000_000;
  const hasher = merkleHasher(nodeCrypto);
  const hashes = Array.from({ length: size }, (_, i) => createHash('sha256').update(`event ${i}`).digest('hex'));

  // 1. The ledger's per-event work: hex-decode the event hash, leaf hash, frontier append.
  const frontier = new CompactFrontier(hasher);
  const t0 = now();
  for (const hash of hashes) frontier.appendLeafHash(hasher.leaf(eventLeaf(hash)));
  const appendNsPerEvent = (now() - t0) / size;
  ctx.log(`  frontier: ${size.toLocaleString('en-US')} appends, ${round(appendNsPerEvent)} ns each`);

  // 2. Admitted calls (two events each) with and without the publisher, interleaved.
  const key = generateSignerKey(nodeCrypto, 'bench.example/ledger');
  const plain = await oursLedger();
  const withTree = await oursLedger({ transparency: checkpointPublisher({ key, sink: () => undefined, everyEvents: 10_000 }) });
  const rounds = ctx.quick ? 4 : 10;
  const perRound = ctx.quick ? 2_000 : 10_000;
  const calls = await interleaved(
    {
      'call, no transparency': (i) => oursCall(plain.ledger, plain.tokens[0] as string, i),
      'call, checkpoint publisher': (i) => oursCall(withTree.ledger, withTree.tokens[0] as string, i),
    },
    rounds,
    perRound,
    ctx.quick ? 1_000 : 5_000,
  );
  await plain.ledger.close();
  await withTree.ledger.close();
  const callNs = 1e9 / (calls['call, no transparency'] as Figures).opsPerSec;
  const treeShare = (2 * appendNsPerEvent) / callNs;

  // 3. Signing a checkpoint of the tree at `size` (root fold + note + Ed25519).
  const signing = timed(ctx.quick ? 200 : 1_000, () => void signNote(nodeCrypto, key, formatCheckpointBody({ origin: key.name, size: frontier.size, root: frontier.root() })));

  // 4. Inclusion proofs at `size`, from a MerkleTree of the log.
  const tree = new MerkleTree(hasher);
  const t1 = now();
  for (const hash of hashes) tree.appendLeafHash(hasher.leaf(eventLeaf(hash)));
  const treeBuildSec = (now() - t1) / 1e9;
  const root = tree.root();
  const probes = indices(ctx.quick ? 2_000 : 10_000, size);
  const proofs: Uint8Array[][] = [];
  const inclusionGen = timed(probes.length, (i) => void proofs.push(tree.inclusionProof(probes[i] as number, size)));
  const leaves = probes.map((p) => tree.leafHash(p));
  let failed = 0;
  const inclusionVerify = timed(probes.length, (i) => {
    if (!verifyInclusion(hasher, probes[i] as number, size, leaves[i] as Uint8Array, proofs[i] as Uint8Array[], root)) failed++;
  });

  // 5. Consistency proofs from earlier sizes to `size`.
  const firsts = indices(ctx.quick ? 500 : 2_000, size - 1).map((m) => m + 1);
  const firstRoots = firsts.map((m) => tree.root(m));
  const consistency: Uint8Array[][] = [];
  const consistencyGen = timed(firsts.length, (i) => void consistency.push(tree.consistencyProof(firsts[i] as number, size)));
  const consistencyVerify = timed(firsts.length, (i) => {
    if (!verifyConsistency(hasher, firsts[i] as number, size, consistency[i] as Uint8Array[], firstRoots[i] as Uint8Array, root)) failed++;
  });
  if (failed > 0) throw new Error(`${failed} proofs did not verify`);

  const inclusionGenUs = inclusionGen.p99Us;
  const inclusionVerifyUs = inclusionVerify.p99Us;
  return {
    id: '11',
    title: `Transparency at ${size.toLocaleString('en-US')} events: tree per event, checkpoint signing, inclusion and consistency proofs`,
    figures: {
      ...calls,
      'checkpoint signing': signing,
      'inclusion proof generation': inclusionGen,
      'inclusion proof verification': inclusionVerify,
      'consistency proof generation': consistencyGen,
      'consistency proof verification': consistencyVerify,
    },
    derived: {
      'tree append ns per event': round(appendNsPerEvent),
      'call ns (no transparency)': round(callNs),
      'tree share of a call (2 events) %': round(treeShare * 100, 2),
      'publisher overhead measured on calls %': round(((calls['call, no transparency'] as Figures).opsPerSec / (calls['call, checkpoint publisher'] as Figures).opsPerSec - 1) * 100, 1),
      'MerkleTree build s (for proofs)': round(treeBuildSec, 2),
      'inclusion proof generation p99 µs (target ≤ 1000)': inclusionGenUs,
      'inclusion proof verification p99 µs (target ≤ 200)': inclusionVerifyUs,
      'inclusion targets met': inclusionGenUs <= 1_000 && inclusionVerifyUs <= 200,
      'inclusion proof hashes': proofs[0]?.length ?? 0,
      'consistency proof hashes (median case)': consistency[0]?.length ?? 0,
    },
    target: { description: "the incremental tree's work per call (2 appends) ≤ 10% of an in-memory admitted call", value: round(treeShare, 4), limit: 0.1, pass: treeShare <= 0.1 },
    notes: [
      'Tree cost: hex-decoding the event hash, the leaf hash and the frontier merges, timed over all appends to a frontier of this size.',
      'The two ledgers are in-memory, sequential, one no-op tool; the publisher signs every 10,000 events (its signing is inside the measured calls).',
      'Proofs come from a MerkleTree that keeps every perfect subtree (64 bytes per leaf); p99 over pseudo-random leaves and first sizes.',
    ],
  };
}
