// transparency-dev/merkle's published vectors (test/fixtures/transparency/transparency-dev-merkle.json
// names the commit): roots of sizes 0-8, the proofgen inclusion and consistency proofs byte for
// byte, and every probe file (happy paths and their corruptions) with its expected verdict.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fromBase64, fromHex, merkleHasher, MerkleTree, nodeCrypto, toHex, verifyConsistency, verifyInclusion } from '../../src/transparency';

interface InclusionProbe { file: string; leafIdx: number; treeSize: number; root: string | null; leafHash: string | null; proof: string[] | null; desc: string; wantErr: boolean }
interface ConsistencyProbe { file: string; size1: number; size2: number; root1: string | null; root2: string | null; proof: string[] | null; desc: string; wantErr: boolean }
interface Vectors {
  inclusion: InclusionProbe[];
  consistency: ConsistencyProbe[];
  leafInputsHex: string[];
  rootsHexBySize: string[];
  inclusionProofsOneBasedLeaf: { leaf: number; size: number; proof: string[] }[];
  consistencyProofs: { size1: number; size2: number; proof: string[] }[];
}

const vectors = JSON.parse(readFileSync(path.join(__dirname, '..', 'fixtures', 'transparency', 'transparency-dev-merkle.json'), 'utf8')) as Vectors;
const hasher = merkleHasher(nodeCrypto);
// Go's encoding/json decodes null and "" as an empty byte slice.
const b64 = (s: string | null): Uint8Array => (s === null || s === '' ? new Uint8Array(0) : (fromBase64(s) as Uint8Array));
const hex = (s: string): Uint8Array => fromHex(s) as Uint8Array;

function treeOfVectorLeaves(): MerkleTree {
  const tree = new MerkleTree(hasher);
  for (const input of vectors.leafInputsHex) tree.appendLeaf(hex(input));
  return tree;
}

describe('transparency-dev/merkle vectors', () => {
  test('the roots of the trees of sizes 0 to 8 match byte for byte', () => {
    const tree = treeOfVectorLeaves();
    expect(vectors.rootsHexBySize.map((_, size) => toHex(tree.root(size)))).toEqual(vectors.rootsHexBySize);
    expect(toHex(hasher.emptyRoot)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('generated inclusion proofs equal the published ones byte for byte', () => {
    const tree = treeOfVectorLeaves();
    for (const v of vectors.inclusionProofsOneBasedLeaf) {
      expect(tree.inclusionProof(v.leaf - 1, v.size).map(toHex)).toEqual(v.proof);
    }
  });

  test('generated consistency proofs equal the published ones byte for byte', () => {
    const tree = treeOfVectorLeaves();
    for (const v of vectors.consistencyProofs) {
      expect(tree.consistencyProof(v.size1, v.size2).map(toHex)).toEqual(v.proof);
    }
  });

  test('every published inclusion probe gets its expected verdict', () => {
    const wrong = vectors.inclusion.filter((p) => verifyInclusion(hasher, p.leafIdx, p.treeSize, b64(p.leafHash), (p.proof ?? []).map(b64), b64(p.root)) === p.wantErr);
    expect(wrong.map((p) => p.file)).toEqual([]);
    expect(vectors.inclusion.length).toBeGreaterThan(90);
  });

  test('every published consistency probe gets its expected verdict', () => {
    const wrong = vectors.consistency.filter((p) => verifyConsistency(hasher, p.size1, p.size2, (p.proof ?? []).map(b64), b64(p.root1), b64(p.root2)) === p.wantErr);
    expect(wrong.map((p) => p.file)).toEqual([]);
    expect(vectors.consistency.length).toBeGreaterThan(90);
  });

  // The corruption list of the issue, each present in the published probes and each rejected.
  const inclusionCorruptions = ['leafIdx-plus-@1', 'leafIdx-sub-@1', 'leafIdx-XOR-@2', 'treeSize-mul-@2', 'treeSize-div-@2', 'wrong-leaf', 'random-root', 'empty-root', 'preceding-garbage', 'trailing-garbage', 'preceding-root', 'trailing-root', 'modified-proof[0]-bit-@3', 'removed-component', 'inserted-component'];
  test.each(inclusionCorruptions)('inclusion corruption %s is rejected wherever it is published', (name) => {
    const probes = vectors.inclusion.filter((p) => p.file.endsWith(`/${name}.json`));
    expect(probes.length).toBeGreaterThan(0);
    for (const p of probes) {
      expect(p.wantErr).toBe(true);
      expect(verifyInclusion(hasher, p.leafIdx, p.treeSize, b64(p.leafHash), (p.proof ?? []).map(b64), b64(p.root))).toBe(false);
    }
  });

  const consistencyCorruptions = ['size1-plus-@1', 'size1-sub-@1', 'size1-XOR-@2', 'size2-mul-@2', 'size2-div-@2', 'wrong-root1', 'wrong-root2', 'swapped-roots', 'preceding-garbage', 'trailing-garbage', 'preceding-root1', 'preceding-root2', 'trailing-root1', 'trailing-root2', 'modified-proof@0-bit-@4', 'preceding-proof-@0', 'empty-proof', 'truncated-proof'];
  test.each(consistencyCorruptions)('consistency corruption %s is rejected wherever it is published', (name) => {
    const probes = vectors.consistency.filter((p) => p.file.endsWith(`/${name}.json`));
    expect(probes.length).toBeGreaterThan(0);
    for (const p of probes) {
      expect(p.wantErr).toBe(true);
      expect(verifyConsistency(hasher, p.size1, p.size2, (p.proof ?? []).map(b64), b64(p.root1), b64(p.root2))).toBe(false);
    }
  });
});
