// The tree's hot path hashes in place (no buffer per hash): nodeCrypto.sha256Into, the hasher's
// leafInto/nodeInto and CompactFrontier.appendLeaf must give exactly the bytes of the allocating
// path, and nothing the frontier hands out may alias its reused buffer.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { CompactFrontier, merkleHasher, nodeCrypto, rootOfEventHashes, type TransparencyCrypto } from '../../src/transparency';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
const withoutInto: TransparencyCrypto = { sha256: (data) => createHash('sha256').update(data).digest(), ed25519Verify: () => false };

test('nodeCrypto.sha256 and sha256Into give the SHA-256 of any input, sha256Into at the offset given and nowhere else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 40 }), (data, at) => {
      const out = new Uint8Array(at + 32 + 8).fill(0xaa);
      (nodeCrypto.sha256Into as NonNullable<TransparencyCrypto['sha256Into']>)(data, out, at);
      expect(hex(out.subarray(at, at + 32))).toBe(sha256(data));
      expect([...out.subarray(0, at), ...out.subarray(at + 32)].every((b) => b === 0xaa)).toBe(true);
      expect(hex(nodeCrypto.sha256(data))).toBe(sha256(data));
    }),
  );
});

test.each([
  ['nodeCrypto (sha256Into)', nodeCrypto],
  ['a crypto without sha256Into (copied from sha256)', withoutInto],
])('leafInto and nodeInto write the RFC 9162 leaf and node hashes in place, with %s', (_name, crypto) => {
  const hasher = merkleHasher(crypto);
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (left, right) => {
      const nodes = new Uint8Array(96);
      hasher.leafInto(left, nodes, 0);
      expect(hex(nodes.subarray(0, 32))).toBe(sha256(Buffer.concat([Buffer.from([0]), left])));
      nodes.set(right, 32);
      hasher.nodeInto(nodes, 0, 32, 64);
      expect(hex(nodes.subarray(64))).toBe(sha256(Buffer.concat([Buffer.from([1]), nodes.subarray(0, 32), right])));
      // Children not adjacent (here: in the other order).
      hasher.nodeInto(nodes, 32, 0, 64);
      expect(hex(nodes.subarray(64))).toBe(sha256(Buffer.concat([Buffer.from([1]), right, nodes.subarray(0, 32)])));
      // In place over its own left child (what a frontier merge does).
      const expected = hex(hasher.node(nodes.subarray(0, 32), nodes.subarray(32, 64)));
      hasher.nodeInto(nodes, 0, 32, 0);
      expect(hex(nodes.subarray(0, 32))).toBe(expected);
    }),
  );
  expect(() => hasher.leafInto(new Uint8Array(31), new Uint8Array(32), 0)).toThrow(RangeError);
});

test('appendLeaf (hashing in place) builds the same frontier, roots and merges as appendLeafHash, at every size to 300', () => {
  const hasher = merkleHasher(nodeCrypto);
  const datas = Array.from({ length: 300 }, (_, i) => createHash('sha256').update(`leaf ${i}`).digest());
  const inPlace = new CompactFrontier(hasher);
  const allocating = new CompactFrontier(hasher);
  const seenInPlace: string[] = [];
  const seenAllocating: string[] = [];
  for (const data of datas) {
    inPlace.appendLeaf(data, (height, nodes, at) => void seenInPlace.push(`${height}:${hex(nodes.subarray(at, at + 32))}`));
    allocating.appendLeafHash(hasher.leaf(data), (height, hash) => void seenAllocating.push(`${height}:${hex(hash)}`));
    expect(hex(inPlace.root())).toBe(hex(allocating.root()));
  }
  expect(seenInPlace).toEqual(seenAllocating);
  expect(inPlace.toJson()).toEqual(allocating.toJson());
  expect(hex(inPlace.root())).toBe(hex(rootOfEventHashes(hasher, datas.map((d) => d.toString('hex'))).root));
});

test("what a frontier hands out is a copy: later appends and callers' writes do not change each other", () => {
  const hasher = merkleHasher(nodeCrypto);
  const frontier = new CompactFrontier(hasher);
  frontier.appendLeaf(new Uint8Array(32).fill(1));
  const root = frontier.root(); // one node: the root is that node
  const ranges = frontier.ranges();
  const before = hex(root);
  frontier.appendLeaf(new Uint8Array(32).fill(2)); // merges into the same slot
  expect(hex(root)).toBe(before);
  expect(hex(ranges[0]?.root as Uint8Array)).toBe(before);
  const copy = frontier.copy();
  root.fill(0);
  (ranges[0]?.root as Uint8Array).fill(0);
  copy.appendLeaf(new Uint8Array(32).fill(3));
  expect(frontier.size).toBe(2);
  expect(hex(frontier.root())).toBe(hex(hasher.node(hasher.leaf(new Uint8Array(32).fill(1)), hasher.leaf(new Uint8Array(32).fill(2)))));
});
