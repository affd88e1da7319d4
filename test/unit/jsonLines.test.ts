import { canonicalJson } from '../../src/domain/canonicalJson';
import { jsonLines, lastLine, lineBoundary, nonCanonicalLines, sharedBytes } from '../../src/verification/jsonLines';

// Reading JSON Lines logs (jsonLines.ts), on byte strings built here.
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

describe('jsonLines', () => {
  it('yields one value per non-blank line, dropping a trailing \\r and skipping blank lines', () => {
    expect([...jsonLines(bytes('{"a":1}\r\n\n   \n{"b":2}\n'))]).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('yields a line that is not JSON as its text, and reads a last line without a newline', () => {
    expect([...jsonLines(bytes('{"a":1}\nnot json\r\n{"c":3}'))]).toEqual([{ a: 1 }, 'not json', { c: 3 }]);
  });

  it('reads only the bytes before byteEnd', () => {
    const log = bytes('{"a":1}\n{"b":2}\n');
    expect([...jsonLines(log, 8)]).toEqual([{ a: 1 }]);
  });

  it('skips a line of whitespace or a lone \\r', () => {
    expect([...jsonLines(bytes('\r\n\t\n'))]).toEqual([]);
  });

  it('decodes UTF-8 text', () => {
    expect([...jsonLines(bytes('{"t":"é"}\n'))]).toEqual([{ t: 'é' }]);
  });
});

describe('sharedBytes', () => {
  it('copies a string or a plain byte array into shared memory, byte for byte', () => {
    for (const log of ['{"t":"é"}\n', bytes('{"a":1}\n')]) {
      const shared = sharedBytes(log);
      expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Buffer.from(shared).toString('utf8')).toBe(typeof log === 'string' ? log : Buffer.from(log).toString('utf8'));
      expect(shared.byteLength).toBe(typeof log === 'string' ? Buffer.byteLength(log) : log.byteLength);
    }
  });

  it('hands back bytes that are already shared', () => {
    const shared = sharedBytes('x');
    expect(sharedBytes(shared)).toBe(shared);
  });
});

describe('lineBoundary', () => {
  const log = bytes('{"a":1}\n\n{"b":2}\n{"c":3}\n');

  it('is the start for a fraction of 0', () => {
    expect(lineBoundary(log, 0)).toEqual({ lines: 0, byteEnd: 0 });
  });

  it('is the first line end at or after the fraction, counting the non-blank lines before it', () => {
    expect(lineBoundary(log, 0.1)).toEqual({ lines: 1, byteEnd: 8 });
    expect(lineBoundary(log, 9 / log.byteLength)).toEqual({ lines: 1, byteEnd: 9 });
    expect(lineBoundary(log, 10 / log.byteLength)).toEqual({ lines: 2, byteEnd: 17 });
  });

  it('is the whole log for a fraction of 1', () => {
    expect(lineBoundary(log, 1)).toEqual({ lines: 3, byteEnd: log.byteLength });
    expect(lineBoundary(bytes('{"a":1}'), 1)).toEqual({ lines: 1, byteEnd: 7 });
  });

  it('counts a whitespace-only line as blank and other text as a line', () => {
    expect(lineBoundary(bytes('  \nxx\n'), 1)).toEqual({ lines: 1, byteEnd: 6 });
  });
});

describe('lastLine', () => {
  it('is the last non-blank line without its \\r', () => {
    expect(lastLine(bytes('{"a":1}\n{"b":2}\r\n\n  \n'))).toBe('{"b":2}');
    expect(lastLine(bytes('{"a":1}\n{"b":2}'))).toBe('{"b":2}');
  });

  it('is empty for a log of blank lines or none', () => {
    expect(lastLine(bytes('\n \n'))).toBe('');
    expect(lastLine(bytes(''))).toBe('');
  });
});

describe('nonCanonicalLines', () => {
  it('finds lines that are not their value’s canonical JSON, with the seq they claim', () => {
    const good = canonicalJson({ seq: 1, type: 'x' });
    const text = [good, '{"type":"x","seq":2}', '{"seq":3, "type":"x"}', canonicalJson({ seq: 4 })].join('\n');
    expect(nonCanonicalLines(bytes(text))).toEqual([{ seq: 2, index: 1 }, { seq: 3, index: 2 }]);
  });

  it('finds a duplicated key, which JSON.parse would hide', () => {
    expect(nonCanonicalLines(bytes('{"seq":1,"seq":1}\n'))).toEqual([{ seq: 1, index: 0 }]);
  });

  it('uses the line number for a line without a safe-integer seq, and skips blank and non-JSON lines', () => {
    const text = `\n${canonicalJson({ seq: 1 })}\nnot json\n{"seq": "2"}\n[1, 2]\r\n`;
    expect(nonCanonicalLines(bytes(text))).toEqual([{ seq: 3, index: 2 }, { seq: 4, index: 3 }]);
  });

  it('treats \\r\\n as a line end, not content', () => {
    expect(nonCanonicalLines(bytes(`${canonicalJson({ seq: 1 })}\r\n`))).toEqual([]);
  });
});

describe('jsonLines: a blank first line', () => {
  it('skips a blank first line and yields each event after it', () => {
    expect([...jsonLines(bytes('\n{"a":1}\n{"b":2}\n'))]).toEqual([{ a: 1 }, { b: 2 }]);
  });
});

describe('lineBoundary: past the first line', () => {
  it('counts no line for a blank first line before the boundary', () => {
    expect(lineBoundary(bytes('\n{"a":1}\n{"b":2}\n'), 1 / 17)).toEqual({ lines: 0, byteEnd: 1 });
  });

  it('is the whole log for a fraction above 1', () => {
    const log = bytes('{"a":1}\n{"b":2}\n');
    expect(lineBoundary(log, 3)).toEqual({ lines: 2, byteEnd: log.byteLength });
  });
});

describe('nonCanonicalLines: seqs and line numbers', () => {
  it('names the seq a line claims, even when it is not its line number', () => {
    expect(nonCanonicalLines(bytes('{"seq":7, "type":"x"}\n'))).toEqual([{ seq: 7, index: 0 }]);
  });

  it('uses the line number for a non-canonical line whose value is null', () => {
    expect(nonCanonicalLines(bytes(' null\n'))).toEqual([{ seq: 1, index: 0 }]);
  });

  it('does not count a whitespace-only line toward the line numbers', () => {
    expect(nonCanonicalLines(bytes('   \n{"b":1, "a":2}\n'))).toEqual([{ seq: 1, index: 0 }]);
  });
});
