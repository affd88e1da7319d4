import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { formatTlogProof, parseTlogProof } from '../../src/transparency';

const hash = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());
const checkpoint = 'example.com/ledger\n3\nAAAA\n\n\u2014 example.com/ledger AAAAAAAA\n';

describe('C2SP tlog-proof text', () => {
  test('has the header, the extra line, the index, one base64 hash per line, a blank line and the checkpoint', () => {
    const text = formatTlogProof({ extra: hash('leaf'), index: 2, proof: [hash('a'), hash('b')], checkpoint });
    expect(text).toBe(`c2sp.org/tlog-proof@v1\nextra ${Buffer.from(hash('leaf')).toString('base64')}\nindex 2\n${Buffer.from(hash('a')).toString('base64')}\n${Buffer.from(hash('b')).toString('base64')}\n\n${checkpoint}`);
    expect(parseTlogProof(text)).toEqual({ extra: hash('leaf'), index: 2, proof: [hash('a'), hash('b')], checkpoint });
  });

  test('round-trips without an extra line and with an empty proof', () => {
    const proof = { extra: undefined, index: 0, proof: [], checkpoint };
    expect(parseTlogProof(formatTlogProof(proof))).toEqual(proof);
  });

  test('refuses a wrong header, a leading-zero index, a short hash or a missing checkpoint', () => {
    const good = formatTlogProof({ extra: hash('leaf'), index: 2, proof: [hash('a')], checkpoint });
    for (const bad of [good.replace('@v1', '@v2'), good.replace('index 2', 'index 02'), good.replace(/\n[^\n]+\n\n/, `\n${Buffer.from(hash('a').subarray(1)).toString('base64')}\n\n`), good.slice(0, good.indexOf('\n\n') + 2), good.replace('index 2\n', '')]) {
      expect(parseTlogProof(bad)).toBeUndefined();
    }
  });

  test('answers arbitrary text with undefined or a well-formed proof, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const parsed = parseTlogProof(`c2sp.org/tlog-proof@v1\n${text}`);
        return parsed === undefined || (Number.isSafeInteger(parsed.index) && parsed.proof.every((h) => h.length === 32) && parsed.checkpoint.length > 0);
      }),
    );
  });
});
