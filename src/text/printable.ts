// The one terminal-safety helper of the CLI and the integrations (both may import src/text; it imports nothing).
/** How much of an untrusted text (an upstream's, a file's) one printed line carries. */
export const printableCharsMax = 512;

// C0 controls, DEL and C1 controls (ESC and the one-byte CSI among them), the format characters
// (bidi overrides and isolates, zero-width characters, BOM), line and paragraph separators, lone
// surrogates, and the backslash (so an escape in the output is never ambiguous).
const unprintable = /[\\\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]|\p{Cs}/gu;

/**
 * Text an upstream or a file sent (a tool name, an error message, a policy's key), fit for a
 * terminal: every control, format or separator character written as a visible escape (`\x1b`, `\u{202e}`), so no escape sequence
 * reaches the terminal and no bidi override reorders the line; cut to `printableCharsMax`
 * characters first (the sender chooses the length), with the cut said.
 */
export function printable(text: string): string {
  const cut = text.length > printableCharsMax;
  const head = cut ? text.slice(0, printableCharsMax) : text;
  const escaped = head.replace(unprintable, (c) => {
    if (c === '\\') return '\\\\';
    const code = c.codePointAt(0) as number;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
  return cut ? `${escaped}… (${text.length - printableCharsMax} more characters)` : escaped;
}
