import { spawnSync } from 'node:child_process';
import { printable, printableCharsMax } from '../../src/text/printable';
import { cli, hostileServer, tempDir, writeJson } from '../support/mcpProxy';

// Regression (issue 30, defect 13): upstream tool names with control characters (terminal escape
// sequences, bidi overrides) were printed raw on the proxy's stderr.

// What must never reach a terminal from an upstream: C0 (ESC, BEL…), DEL, C1 (CSI), bidi controls.
const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('regression: terminal escapes from an upstream', () => {
  it('escapes the control characters of an upstream tool name in the proxy\'s stderr', () => {
    const tmp = tempDir();
    try {
      const policy = writeJson(tmp.file('policy.json'), { tools: ['echo'], expiresIn: '1h', budget: { calls: 1, inputBytes: 100 } });
      // stdin closed at once: the proxy starts, prints what it refused, and ends.
      const run = spawnSync(process.execPath, [cli, 'proxy', '--ledger', tmp.file('l.sqlite'), '--policy', policy, '--', process.execPath, hostileServer], { input: '', encoding: 'utf8', timeout: 60_000 });
      expect(run.stderr).toContain('atc proxy: tool evil\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}name\\x9b31m refused');
      expect(run.stderr).not.toMatch(raw);
    } finally {
      tmp.cleanup();
    }
  });

  it.each([
    ['ESC and BEL', 'a\u001b[31mb\u0007', 'a\\x1b[31mb\\x07'],
    ['C1 CSI and DEL', '\u009b2J\u007f', '\\x9b2J\\x7f'],
    ['newline and carriage return', 'a\r\nb', 'a\\x0d\\x0ab'],
    ['bidi override and isolate', '\u202eabc\u2066', '\\u{202e}abc\\u{2066}'],
    ['line separator and BOM', '\u2028\ufeff', '\\u{2028}\\u{feff}'],
    ['a lone surrogate', 'a\ud800b', 'a\\u{d800}b'],
    ['a backslash (so escapes stay unambiguous)', 'a\\x1b', 'a\\\\x1b'],
    ['plain text and non-Latin letters', 'read_file: naïve 東京', 'read_file: naïve 東京'],
  ])('printable() escapes %s', (_label, input, expected) => {
    expect(printable(input)).toBe(expected);
  });

  it('printable() cuts what it is given to a bound before escaping', () => {
    const out = printable('\u001b'.repeat(1_000_000));
    expect(out.startsWith('\\x1b'.repeat(printableCharsMax))).toBe(true);
    expect(out).toContain(`(${1_000_000 - printableCharsMax} more characters)`);
    expect(out).not.toMatch(raw);
  });
});
