// C2SP signed-note, note key formats, tlog-checkpoint and tlog-cosignature. Known answers: the
// signed-note spec's example and Go's golang.org/x/mod/sumdb/note documentation example (Ed25519 is
// deterministic, so signing the same text with the same key must give the same note byte for byte).
import fc from 'fast-check';
import { createHash, createPrivateKey, sign as nodeSign } from 'node:crypto';
import {
  cosignatureLine,
  cosignerVerifierKey,
  formatCheckpointBody,
  formatSignerKey,
  formatVerifierKey,
  generateSignerKey,
  nodeCrypto,
  parseCheckpointBody,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
  verifierKeyOf,
  verifyCheckpoint,
  verifyNote,
  ed25519NoteVerifier,
  type VerifierKey,
} from '../../src/transparency';

const specVkey = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const specNote = 'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
const goSkey = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const goVkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const goText = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const goNote = `${goText}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

function vkey(text: string): VerifierKey {
  const parsed = parseVerifierKey(nodeCrypto, text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.key;
}
const verifier = (text: string) => ed25519NoteVerifier(nodeCrypto, vkey(text));

describe('signed notes and keys', () => {
  test("the signed-note spec's example verifies with its verifier key", () => {
    const result = verifyNote(specNote, [verifier(specVkey)]);
    expect(result).toMatchObject({ ok: true, text: 'This is an example message.\n', verifiedBy: ['example.com/foo'] });
  });

  test("Go's documented signer key signs its text into exactly the documented note", () => {
    const signer = parseSignerKey(nodeCrypto, goSkey);
    if (!signer.ok) throw new Error(signer.message);
    expect(signNote(nodeCrypto, signer.key, goText)).toBe(goNote);
    expect(formatVerifierKey(verifierKeyOf(signer.key))).toBe(goVkey);
    expect(formatSignerKey(signer.key)).toBe(goSkey);
    expect(verifyNote(goNote, [verifier(goVkey)]).ok).toBe(true);
  });

  test('the key ID is the first four bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)', () => {
    const key = vkey(goVkey);
    const digest = createHash('sha256').update(Buffer.concat([Buffer.from('PeterNeumann\n'), Buffer.from([1]), Buffer.from(key.publicKey)])).digest();
    expect(digest.subarray(0, 4).toString('hex')).toBe('c74f20a3');
    expect(key.keyId.toString(16)).toBe('c74f20a3');
  });

  test('a generated key round-trips through both text formats and signs verifiable notes', () => {
    const key = generateSignerKey(nodeCrypto, 'example.com/log');
    const again = parseSignerKey(nodeCrypto, formatSignerKey(key));
    expect(again.ok && again.key.keyId === key.keyId).toBe(true);
    const note = signNote(nodeCrypto, key, 'hello\n');
    expect(verifyNote(note, [ed25519NoteVerifier(nodeCrypto, vkey(formatVerifierKey(verifierKeyOf(key))))]).ok).toBe(true);
  });

  test('a note is rejected under the wrong key (same name and ID, other public key: unknown, so no known signature)', () => {
    const other = generateSignerKey(nodeCrypto, 'PeterNeumann');
    expect(verifyNote(goNote, [ed25519NoteVerifier(nodeCrypto, verifierKeyOf(other))])).toMatchObject({ ok: false, code: 'no_known_signature' });
    // A key that claims Go's name and ID but holds another public key is a known key whose signature fails.
    const impostor = { ...vkey(goVkey), publicKey: other.publicKey };
    expect(verifyNote(goNote, [ed25519NoteVerifier(nodeCrypto, impostor)])).toMatchObject({ ok: false, code: 'invalid_signature' });
  });

  test('an altered body is rejected', () => {
    expect(verifyNote(goNote.replace('cryptography', 'cryptograph'), [verifier(goVkey)])).toMatchObject({ ok: false, code: 'invalid_signature' });
    expect(verifyNote(goNote.replace('problem,', 'problem!'), [verifier(goVkey)]).ok).toBe(false);
  });

  test('extra blank lines are part of the text (so the signature fails) or leave no signature block', () => {
    // One more blank line between text and signatures: the text gains a trailing newline.
    expect(verifyNote(goNote.replace(`${goText}\n`, `${goText}\n\n`), [verifier(goVkey)]).ok).toBe(false);
    // A blank line after the signatures: the last blank line now precedes nothing.
    expect(verifyNote(`${goNote}\n`, [verifier(goVkey)]).ok).toBe(false);
    // A blank line inside the text: a different text.
    expect(verifyNote(goNote.replace('problem,\n', 'problem,\n\n'), [verifier(goVkey)]).ok).toBe(false);
  });

  test('unknown signature lines are ignored; a note signed only by unknown keys is rejected', () => {
    const withStranger = `${goNote}\u2014 stranger.example/key AAAAAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==\n`;
    expect(verifyNote(withStranger, [verifier(goVkey)])).toMatchObject({ ok: true, unknownSignatures: 1 });
    // Same name, other key ID: also unknown (the tuple identifies the key).
    const sameName = goNote.replace('x08go', 'x08gp');
    expect(verifyNote(`${goNote}${sameName.slice(goText.length + 1)}`, [verifier(goVkey)])).toMatchObject({ ok: true, unknownSignatures: 1 });
    expect(verifyNote(withStranger.replace(goNote.slice(goText.length + 1), ''), [verifier(goVkey)])).toMatchObject({ ok: false, code: 'no_known_signature' });
  });

  test('malformed notes are refused with a code, never a throw', () => {
    const v = [verifier(goVkey)];
    for (const bad of ['', 'no newline', 'text\n', 'text\n\n', 'text\n\n\u2014 x\n', `text\n\n\u2014 PeterNeumann !!!\n`, `a\u0007b\n\n${goNote.slice(goText.length + 1)}`, goNote.replace('\u2014 ', '- ')]) {
      expect(verifyNote(bad, v).ok).toBe(false);
    }
    expect(parseNote(new Uint8Array([0xff, 0x0a, 0x0a])).ok).toBe(false);
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => verifyNote(text, v).ok === false));
  });

  test('mangled verifier and signer keys are refused', () => {
    for (let i = 0; i < goVkey.length; i++) {
      const mangled = goVkey.slice(0, i) + String.fromCharCode(goVkey.charCodeAt(i) + 1) + goVkey.slice(i + 1);
      expect(parseVerifierKey(nodeCrypto, mangled).ok).toBe(false);
    }
    expect(parseVerifierKey(nodeCrypto, 'PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==').ok).toBe(false);
    expect(parseVerifierKey(nodeCrypto, 'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW').ok).toBe(false);
    for (let i = 1; i < goSkey.length; i++) expect(parseSignerKey(nodeCrypto, goSkey.slice(0, i)).ok).toBe(false);
  });
});

describe('checkpoints and cosignatures', () => {
  const log = generateSignerKey(nodeCrypto, 'example.com/ledger');
  const logVkey = verifierKeyOf(log);
  const root = createHash('sha256').update('root').digest();
  const body = formatCheckpointBody({ origin: 'example.com/ledger', size: 42, root });
  const witnessSeed = createHash('sha256').update('witness seed').digest();
  const witness = cosignerVerifierKey(nodeCrypto, 'witness.example/w1', witnessSeed);

  test('a checkpoint body is exactly origin, size and base64 root, each on its line', () => {
    expect(body).toBe(`example.com/ledger\n42\n${root.toString('base64')}\n`);
    expect(parseCheckpointBody(body)).toMatchObject({ origin: 'example.com/ledger', size: 42, extensions: [] });
    for (const bad of ['example.com/ledger\n042\nAA==\n', 'o\n1\n', 'o\n-1\n' + root.toString('base64') + '\n', `o\n1\n${root.toString('base64')}`, `o\n1\n${root.subarray(1).toString('base64')}\n`, `\n1\n${root.toString('base64')}\n`]) {
      expect(parseCheckpointBody(bad)).toBeUndefined();
    }
  });

  test("a checkpoint verifies with the log's key, and not under another origin", () => {
    const note = signNote(nodeCrypto, log, body);
    expect(verifyCheckpoint(nodeCrypto, note, logVkey)).toMatchObject({ ok: true, checkpoint: { size: 42 }, cosignedBy: [] });
    const elsewhere = generateSignerKey(nodeCrypto, 'example.com/other');
    expect(verifyCheckpoint(nodeCrypto, signNote(nodeCrypto, elsewhere, body), verifierKeyOf(elsewhere))).toMatchObject({ ok: false, code: 'origin_mismatch' });
  });

  test('a witness cosignature (C2SP tlog-cosignature v1) verifies when its key is given and is ignored otherwise', () => {
    const note = signNote(nodeCrypto, log, body) + cosignatureLine(nodeCrypto, witness.name, witnessSeed, body, 1_700_000_000);
    expect(verifyCheckpoint(nodeCrypto, note, logVkey, [witness])).toMatchObject({ ok: true, cosignedBy: ['witness.example/w1'] });
    expect(verifyCheckpoint(nodeCrypto, note, logVkey)).toMatchObject({ ok: true, cosignedBy: [] });
    expect(formatVerifierKey(witness)).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+B/);
  });

  test('the cosignature is an Ed25519 signature over the spec message, built here independently', () => {
    const ts = 1_679_315_147;
    const line = cosignatureLine(nodeCrypto, witness.name, witnessSeed, body, ts);
    const raw = Buffer.from(line.trim().split(' ')[2] as string, 'base64');
    expect(raw.readBigUInt64BE(4)).toBe(BigInt(ts));
    const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), witnessSeed]), format: 'der', type: 'pkcs8' });
    const expected = nodeSign(null, Buffer.from(`cosignature/v1\ntime ${ts}\n${body}`), key);
    expect(raw.subarray(12).equals(expected)).toBe(true);
    const id = createHash('sha256').update(Buffer.concat([Buffer.from('witness.example/w1\n'), Buffer.from([4]), Buffer.from(witness.publicKey)])).digest();
    expect(raw.subarray(0, 4).equals(id.subarray(0, 4))).toBe(true);
  });

  test("a known witness's bad cosignature rejects the checkpoint; a cosignature alone is not the log's signature", () => {
    const good = cosignatureLine(nodeCrypto, witness.name, witnessSeed, body, 1_700_000_000);
    const forged = cosignatureLine(nodeCrypto, witness.name, witnessSeed, body.replace('42', '43'), 1_700_000_000);
    expect(verifyCheckpoint(nodeCrypto, signNote(nodeCrypto, log, body) + forged, logVkey, [witness])).toMatchObject({ ok: false, code: 'invalid_note' });
    expect(verifyCheckpoint(nodeCrypto, `${body}\n${good}`, logVkey, [witness])).toMatchObject({ ok: false, code: 'not_signed_by_log' });
  });

  test('a cosignature key (type 0x04) cannot verify a log signature, nor a log key a cosignature', () => {
    expect(() => ed25519NoteVerifier(nodeCrypto, witness)).toThrow(TypeError);
    expect(witness.keyId).not.toBe(cosignerVerifierKey(nodeCrypto, 'witness.example/w2', witnessSeed).keyId);
  });
});
