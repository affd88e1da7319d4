// Byte helpers with no Node-only API (atob/btoa and TextEncoder exist in Node 20 and browsers), so
// the verifier modules of src/transparency can run in a page.

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number);
  return btoa(binary);
}

/** Strict RFC 4648 §4 base64 (padding required, no whitespace, canonical trailing bits); undefined otherwise. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!base64Pattern.test(text)) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // Non-zero unused bits would give a second spelling of the same bytes: refuse it.
  return toBase64(bytes) === text ? bytes : undefined;
}

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (let i = 0; i < bytes.length; i++) hex += (bytes[i] as number).toString(16).padStart(2, '0');
  return hex;
}

/** Nibble value of each char code (lower-case hex digits), 255 otherwise. */
const nibbles = new Uint8Array(128).fill(255);
for (let i = 0; i < 16; i++) nibbles['0123456789abcdef'.charCodeAt(i)] = i;

/** Lower-case hex only; undefined otherwise. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  return fromHexInto(text, bytes) ? bytes : undefined;
}

/**
 * Decodes lower-case hex of exactly `out.length` bytes into `out`; false (out partly written) for
 * anything else. Table-driven and allocation-free: the tree runs it once per appended event.
 */
export function fromHexInto(text: string, out: Uint8Array): boolean {
  if (text.length !== 2 * out.length) return false;
  for (let i = 0; i < out.length; i++) {
    const hi = nibbles[text.charCodeAt(2 * i)] ?? 255;
    const lo = nibbles[text.charCodeAt(2 * i + 1)] ?? 255;
    if (hi === 255 || lo === 255) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 decoding that refuses invalid sequences (undefined) instead of inserting U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Decimal without sign or leading zeros ("0" itself allowed), as a safe integer; undefined otherwise. */
export function parseDecimal(text: string): number | undefined {
  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
