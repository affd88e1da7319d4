/**
 * How AgentDojo argument values become canonical virtual resources. The ledger never normalizes a
 * resource, so the host's `resources(args)` must produce canonical names itself; these helpers do it
 * with an injective encoding, so two values the tool would treat differently never share a name.
 */

const keptChar = /[A-Za-z0-9_@+.-]/;
const encoder = new TextEncoder();

function escapeChar(char: string): string {
  return Array.from(encoder.encode(char), (byte) => `~${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/**
 * One path segment: letters, digits and `_ @ + . -` are kept; every other character (space, `/`,
 * `~`, `%`, non-ASCII…) becomes `~HH` per UTF-8 byte; a leading `.` is escaped so no segment is `.`
 * or `..`; the empty string is `~`. The result is ASCII, so it is NFC/NFKC-stable. Case is kept.
 */
export function segment(value: string): string {
  if (value === '') return '~';
  let out = '';
  for (const char of value) out += keptChar.test(char) && char !== '~' ? char : escapeChar(char);
  return out.startsWith('.') ? `~2E${out.slice(1)}` : out;
}

/** An e-mail address, lowercased (addresses are compared case-insensitively by mail systems). */
export function addressResource(address: string): string {
  return `mail:/to/${segment(address.toLowerCase())}`;
}

/**
 * A web page as AgentDojo names it (`www.host.com/path`, optionally with a scheme): the host is
 * lowercased, each path segment encoded. A trailing `/` is kept as an empty (`~`) segment so that
 * `host/a` and `host/a/` stay different names.
 */
export function webResource(url: string): string {
  const withoutScheme = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
  const [host = '', ...pathParts] = withoutScheme.split('/');
  return ['web:', segment(host.toLowerCase()), ...pathParts.map(segment)].join('/');
}

/** A name under a fixed prefix such as `slack:/channel/`: the value encoded as one segment. */
export function named(prefix: string, value: string): string {
  return `${prefix}${segment(value)}`;
}
