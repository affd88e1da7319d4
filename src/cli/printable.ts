/**
 * Text from a file or an upstream, made safe to print on a terminal: control characters (C0, DEL,
 * C1: escape sequences could rewrite what the reader sees) and bidi/format characters are written
 * as `\u{…}` escapes. Everything else is printed as it is.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\p{Cf}]/gu, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}
