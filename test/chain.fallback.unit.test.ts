// sha256Hex on a Node without the one-shot crypto.hash (before 20.12): the streaming digest gives
// the same text. Loaded in isolation with node:crypto lacking `hash`.

describe('sha256Hex without crypto.hash', () => {
  afterEach(() => jest.dontMock('node:crypto'));
  it('gives the SHA-256 hex digest through createHash', () => {
    const real = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    const createHash = jest.fn(real.createHash);
    jest.doMock('node:crypto', () => ({ ...real, hash: undefined, createHash }));
    let sha256Hex: ((text: string) => string) | undefined;
    jest.isolateModules(() => {
      ({ sha256Hex } = require('../src/domain/chain') as { sha256Hex: (text: string) => string });
    });
    expect(sha256Hex?.('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex?.('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(createHash).toHaveBeenCalledTimes(2);
  });
});
