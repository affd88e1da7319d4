// SHA-256 (FIPS 180-4) in plain JavaScript, for the tree's small inputs. Why not node:crypto for
// these: a native call costs a fixed overhead (binding, OpenSSL 3's per-call digest fetch, a
// Buffer) that is about three times the compression itself for a 33- or 65-byte message, and the
// tree hashes two such messages per appended event. Why not @noble/hashes: its per-call object
// set-up costs as much again. No allocation but the 32-byte result; pure, so it also runs in a page.
// Tested against node:crypto on every length up to 300 and random inputs (test/transparency.sha256.test.ts).

const roundConstants = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const initialHash = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

// Scratch state: the functions below run to completion synchronously, so one set is enough.
const schedule = new Int32Array(64);
const state = new Int32Array(8);
const lastBlocks = new Uint8Array(128);

/** Loads the 64-byte block at `offset` (big-endian words) into the schedule's first 16 words. */
function load(bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const at = offset + 4 * i;
    schedule[i] = ((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
  }
}

/** One compression of the loaded block into `state`. */
function compress(): void {
  const w = schedule;
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15] as number;
    const b = w[i - 2] as number;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
  }
  let a = state[0] as number;
  let b = state[1] as number;
  let c = state[2] as number;
  let d = state[3] as number;
  let e = state[4] as number;
  let f = state[5] as number;
  let g = state[6] as number;
  let h = state[7] as number;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + (roundConstants[i] as number) + (w[i] as number)) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
  state[4] = ((state[4] as number) + e) | 0;
  state[5] = ((state[5] as number) + f) | 0;
  state[6] = ((state[6] as number) + g) | 0;
  state[7] = ((state[7] as number) + h) | 0;
}

/** SHA-256 of `data` (any length below 2^53 bits); does not keep a reference to `data`. */
export function sha256(data: Uint8Array): Uint8Array {
  state.set(initialHash);
  const length = data.length;
  const whole = length - (length % 64);
  for (let offset = 0; offset < whole; offset += 64) {
    load(data, offset);
    compress();
  }
  // The rest, 0x80, zeros and the 64-bit big-endian bit length: one block, or two when the rest
  // leaves fewer than 9 bytes free.
  const rest = length - whole;
  const blocks = rest < 56 ? 1 : 2;
  lastBlocks.fill(0, 0, 64 * blocks);
  for (let i = 0; i < rest; i++) lastBlocks[i] = data[whole + i] as number;
  lastBlocks[rest] = 0x80;
  const end = 64 * blocks;
  const bitsHigh = Math.floor(length / 0x20000000); // length · 8 / 2^32
  const bitsLow = (length * 8) % 0x100000000;
  for (let i = 0; i < 4; i++) {
    lastBlocks[end - 8 + i] = (bitsHigh >>> (24 - 8 * i)) & 0xff;
    lastBlocks[end - 4 + i] = (bitsLow >>> (24 - 8 * i)) & 0xff;
  }
  for (let offset = 0; offset < end; offset += 64) {
    load(lastBlocks, offset);
    compress();
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const word = state[i] as number;
    out[4 * i] = word >>> 24;
    out[4 * i + 1] = (word >>> 16) & 0xff;
    out[4 * i + 2] = (word >>> 8) & 0xff;
    out[4 * i + 3] = word & 0xff;
  }
  return out;
}
