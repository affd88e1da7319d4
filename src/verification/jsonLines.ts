import { canonicalJson } from '../domain/canonicalJson';

/** The text of the line at `[start, end)` (`end` at its `\n` or the end), a trailing `\r` dropped. */
function lineText(buf: Buffer, start: number, end: number): string {
  return buf.toString('utf8', start, end > start && buf[end - 1] === 13 ? end - 1 : end);
}

/**
 * The events of a JSON Lines log, one per non-blank line (a trailing `\r` is dropped). A line that is
 * not JSON yields its text, which the shape check reports as malformed.
 */
export function* jsonLines(bytes: Uint8Array, byteEnd = bytes.byteLength): Generator<unknown> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, byteEnd);
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    const line = lineText(buf, start, end);
    start = end + 1;
    // Event lines start with '{': only other lines can be blank.
    if (line.charCodeAt(0) !== 123 && line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line) as unknown;
    } catch {
      value = line;
    }
    yield value;
  }
}

/** The log's bytes in memory a worker thread can read without a copy. */
export function sharedBytes(log: string | Uint8Array): Uint8Array {
  if (typeof log !== 'string' && log.buffer instanceof SharedArrayBuffer) return log;
  const length = typeof log === 'string' ? Buffer.byteLength(log, 'utf8') : log.byteLength;
  const shared = Buffer.from(new SharedArrayBuffer(length));
  if (typeof log === 'string') shared.write(log, 'utf8');
  else shared.set(log);
  return new Uint8Array(shared.buffer, 0, length);
}

/** The first line boundary at or after `fraction` of the bytes, and how many non-blank lines lie before it. */
export function lineBoundary(bytes: Uint8Array, fraction: number): { readonly lines: number; readonly byteEnd: number } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const target = Math.floor(buf.length * fraction);
  if (target <= 0) return { lines: 0, byteEnd: 0 };
  let lines = 0;
  let start = 0;
  while (start < buf.length && start < target) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    // Event lines start with '{'; anything else is decoded to tell blank from malformed.
    if (buf[start] === 123 || buf.toString('utf8', start, end).trim() !== '') lines++;
    start = end + 1;
  }
  return { lines, byteEnd: Math.min(start, buf.length) };
}

/** The last non-blank line's text (a trailing `\r` dropped); '' when there is none. */
export function lastLine(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = buf.length;
  while (end > 0) {
    const start = buf.lastIndexOf(10, end - 1) + 1;
    const line = lineText(buf, start, end);
    if (line.trim() !== '') return line;
    end = start - 1;
  }
  return '';
}

/**
 * The lines of a JSON Lines log that are JSON but not exactly the RFC 8785 canonical JSON of the
 * value they parse to (reordered keys, whitespace, a duplicated key: JSON.parse keeps the last value,
 * so a forged first one would otherwise pass), with the seq each claims (or its line number). A line
 * end of `\r\n` is a line end, not content. Lines that are not JSON are the shape check's to report.
 */
export function nonCanonicalLines(bytes: Uint8Array): { readonly seq: number; readonly index: number }[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: { seq: number; index: number }[] = [];
  let start = 0;
  let index = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    const line = lineText(buf, start, end);
    start = end + 1;
    if (line.charCodeAt(0) !== 123 && line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (canonicalJson(value) !== line) {
        const seq: unknown = value !== null && typeof value === 'object' ? (value as { seq?: unknown }).seq : undefined;
        found.push({ seq: Number.isSafeInteger(seq) ? (seq as number) : index + 1, index });
      }
    } catch {
      // not JSON, or not writable as canonical JSON: reported as malformed by verify
    }
    index++;
  }
  return found;
}
