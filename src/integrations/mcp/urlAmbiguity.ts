import { urlLengthMax } from '../../resources/url/urlResource';

/**
 * The proxy checks a `url:` argument with the WHATWG parser (`urlResource`) but forwards the text
 * as the agent wrote it, and the upstream parses it again, often by RFC 3986 (curl, Python's
 * `urlsplit`, Go's `net/url`). Where the two disagree, the proxy would check one URL and the server
 * fetch another: `http://A\@B/secret` is a path on host A to WHATWG and host B to `urlsplit`. So
 * the proxy accepts only text that both read alike, and refuses the rest (`invalid_resource`)
 * rather than forwarding a rewritten URL (the upstream then gets exactly what the log shows).
 *
 * Text both read alike: printable ASCII from RFC 3986's set only (no `\`, space, tab, newline,
 * control or non-ASCII character: WHATWG strips or rewrites them, others keep them); every `%`
 * followed by two hex digits; an http(s) scheme followed by `//`; an authority that is a host
 * (no `@`, no `%`) written as WHATWG prints it (lower case, dotted-quad IPv4, compressed IPv6: so
 * `0x7f.1`, `127.1` or a host WHATWG would IDNA-map are refused) and a port in its plain form; a
 * path WHATWG leaves unchanged (no dot segments, `%2e` included); `[` `]` only around an IPv6 host.
 */
export function urlReadAlike(text: string): boolean {
  if (text.length > urlLengthMax) return false;
  if (!rfc3986Text.test(text) || /%(?![0-9A-Fa-f]{2})/.test(text)) return false;
  const parts = rfc3986Parts.exec(text);
  if (parts === null) return false;
  const [, scheme, authority, path, rest] = parts as unknown as [string, string, string, string, string];
  const defaultPort = defaultPorts[scheme.toLowerCase()];
  if (defaultPort === undefined || /[[\]]/.test(path + rest)) return false;
  const hostPort = authorityPattern.exec(authority);
  if (hostPort === null) return false;
  const [, host, portText] = hostPort as unknown as [string, string, string | undefined];
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol !== `${scheme.toLowerCase()}:` || url.username !== '' || url.password !== '') return false;
  if (url.hostname !== host.toLowerCase()) return false;
  const samePort = portText === undefined || portText === '' ? url.port === '' : url.port === portText || (url.port === '' && portText === String(defaultPort));
  if (!samePort) return false;
  return url.pathname === (path === '' ? '/' : path);
}

const defaultPorts: { readonly [scheme: string]: number } = { http: 80, https: 443 };
// RFC 3986 unreserved, reserved and '%' (checked as pct-encoded separately).
const rfc3986Text = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
// RFC 3986 appendix B, with the authority required: scheme, authority, path, query and fragment.
const rfc3986Parts = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)((?:\?[^#]*)?(?:#.*)?)$/;
// A host (reg-name without sub-delims or escapes, or an IPv6 literal) and an optional port.
const authorityPattern = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9._-]{1,253})(?::([0-9]{0,5}))?$/;
