import { hashBytes } from './merkleHasher';

/** A growable array of 32-byte hashes in one buffer (no object per hash). */
export class HashArray {
  private buffer = new Uint8Array(hashBytes * 16);
  length = 0;

  push(hash: Uint8Array): void {
    if ((this.length + 1) * hashBytes > this.buffer.length) {
      const bigger = new Uint8Array(this.buffer.length * 2);
      bigger.set(this.buffer);
      this.buffer = bigger;
    }
    this.buffer.set(hash, this.length * hashBytes);
    this.length++;
  }

  /** A view of hash `i` (valid until the next push). */
  at(i: number): Uint8Array {
    return this.buffer.subarray(i * hashBytes, (i + 1) * hashBytes);
  }
}
