import { eventHash, sealEvent, sha256Hex } from '../../src/domain/chain';
import type { EventPayload } from '../../src/domain/events';
import { genesisHash } from '../../src/domain/events';

// The hash chain's primitives (chain.ts), on payloads built here.
const registered = (): EventPayload => ({ type: 'tool.registered', tool: 'notes', inputSchema: { type: 'object' } });

describe('sha256Hex', () => {
  it('is SHA-256 in lower-case hex over the UTF-8 bytes (FIPS 180-2 and a 2-byte character)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('\u00e9')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
  });
});

describe('eventHash', () => {
  it('hashes the canonical text of the event without its hash field', () => {
    const event = sealEvent(registered(), 5, { seq: 0, hash: genesisHash });
    expect(eventHash(event)).toBe(event.hash);
    expect(eventHash({ ...event, hash: 'anything' })).toBe(event.hash);
  });

  it('changes when any other field changes', () => {
    const event = sealEvent(registered(), 5, { seq: 0, hash: genesisHash });
    for (const changed of [{ ...event, seq: 2 }, { ...event, at: 6 }, { ...event, prevHash: '1'.repeat(64) }, { ...event, tool: 'other' }]) {
      expect(eventHash(changed)).not.toBe(event.hash);
    }
  });
});

describe('sealEvent', () => {
  it('numbers the event after the head, stamps its time and chains it on the head’s hash', () => {
    const event = sealEvent(registered(), 42, { seq: 7, hash: 'a'.repeat(64) });
    expect(event).toMatchObject({ type: 'tool.registered', seq: 8, at: 42, prevHash: 'a'.repeat(64) });
    expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not change the payload it was given', () => {
    const payload = registered();
    sealEvent(payload, 1, { seq: 0, hash: genesisHash });
    expect(payload).toEqual(registered());
  });

  it('freezes the event and what it holds', () => {
    const event = sealEvent(registered(), 1, { seq: 0, hash: genesisHash });
    expect(Object.isFrozen(event)).toBe(true);
    expect(event.type === 'tool.registered' && Object.isFrozen(event.inputSchema)).toBe(true);
  });
});
