/**
 * UTF-8 length of a string without encoding it: what `new TextEncoder().encode(text).length`
 * gives, a lone surrogate counting as U+FFFD (3 bytes). Resource limits are in bytes; encoding
 * every resource of every call only to measure it would allocate for nothing.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    // A high surrogate at the end reads NaN next, and `NaN & 0xfc00` is 0: counted as a lone one.
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
