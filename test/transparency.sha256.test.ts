// The pure-JS SHA-256 the tree hashes with (src/transparency/sha256.ts) against node:crypto's: every
// length around the block and padding boundaries, random inputs, the FIPS 180-4 examples, and that
// it neither keeps nor changes its input.
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { sha256 } from '../src/transparency/sha256';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const reference = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

test('the FIPS 180-4 examples: "abc", the 448-bit message and the empty message', () => {
  expect(hex(sha256(Buffer.from('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  expect(hex(sha256(Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  expect(hex(sha256(new Uint8Array(0)))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('every length from 0 to 300 bytes hashes as node:crypto does', () => {
  const mismatches: number[] = [];
  for (let length = 0; length <= 300; length++) {
    const data = Uint8Array.from({ length }, (_, i) => (i * 131 + length * 7) & 0xff);
    if (hex(sha256(data)) !== reference(data)) mismatches.push(length);
  }
  expect(mismatches).toEqual([]);
});

test('random inputs (the tree\'s 33- and 65-byte shapes among them) hash as node:crypto does', () => {
  fc.assert(
    fc.property(fc.oneof(fc.uint8Array({ minLength: 33, maxLength: 33 }), fc.uint8Array({ minLength: 65, maxLength: 65 }), fc.uint8Array({ maxLength: 2_000 })), (data) => {
      expect(hex(sha256(data))).toBe(reference(data));
    }),
    { numRuns: 2_000 },
  );
});

test('a million-byte input (many blocks) hashes as node:crypto does', () => {
  const data = Uint8Array.from({ length: 1_000_000 }, (_, i) => (i * 7) & 0xff);
  expect(hex(sha256(data))).toBe(reference(data));
});

test('the input is left as it was and each result is a fresh array', () => {
  const data = Uint8Array.from({ length: 65 }, (_, i) => i);
  const before = hex(data);
  const first = sha256(data);
  const second = sha256(data);
  expect(hex(data)).toBe(before);
  expect(first).not.toBe(second);
  first.fill(0);
  expect(hex(second)).toBe(reference(data));
});
