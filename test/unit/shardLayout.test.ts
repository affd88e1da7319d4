import { indexAt, indexOfKey, slot } from '../../src/domain/shardLayout';

// The sharded map's layout: FNV-1a over UTF-16 code units picks a key's path, six bits per level.

describe('slot', () => {
  it('is 32-bit FNV-1a (the published offset basis and the vectors for "a" and "foobar")', () => {
    expect(slot('')).toBe(0x811c9dc5);
    expect(slot('a')).toBe(0xe40c292c);
    expect(slot('foobar')).toBe(0xbf9cf968);
  });
});

describe('indexAt', () => {
  it('takes six bits of the hash per level, lowest first', () => {
    expect(indexAt(0xffffffff, 0)).toBe(63);
    expect(indexAt(1 << 6, 1)).toBe(1);
    expect(indexAt(5 << 12, 2)).toBe(5);
    expect(indexAt(5 << 12, 1)).toBe(0);
  });
});

describe('indexOfKey', () => {
  it('finds a key at its even position in a flat leaf, and -1 when absent', () => {
    expect(indexOfKey(['a', 1, 'b', 2], 'b')).toBe(2);
    expect(indexOfKey(['a', 'b'], 'b')).toBe(-1);
  });
});
