import { isCanonicalResource, isCanonicalScope } from '../../domain/resources';
import { ResourceRefusedError } from '../resourceRefusedError';

const defaultPorts: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };
/** URLs longer than this are refused before parsing. */
export const urlLengthMax = 8_192;
// What a decoded path segment may not hold: it would be another segment, an escape or a control.
const forbiddenDecoded = /[/\\\u0000-\u001f\u007f-\u009f]/;

const invalid = (): ResourceRefusedError => new ResourceRefusedError('invalid_resource');

export interface ParsedUrlResource {
  readonly url: URL;
  /** `https:/host:443/seg…` */
  readonly resource: string;
  /** The host as the URL parser left it (ASCII, lower case; `[…]` for IPv6). */
  readonly host: string;
  readonly port: number;
}

function parse(input: string | URL): { url: URL; authority: string; segments: string[]; trailingSlash: boolean } {
  const text = input instanceof URL ? input.href : input;
  if (typeof text !== 'string' || text.length > urlLengthMax) throw invalid();
  let url: URL;
  try {
    url = new URL(text); // WHATWG: IDNA to ASCII, lower-case host, numeric hosts dotted, dot segments removed
  } catch {
    throw invalid();
  }
  const defaultPort = defaultPorts[url.protocol];
  if (defaultPort === undefined || url.hostname === '') throw invalid();
  if (url.username !== '' || url.password !== '') throw invalid(); // userinfo: `https://allowed@evil/`
  const port = url.port === '' ? defaultPort : Number(url.port);
  const authority = `${url.protocol.slice(0, -1)}:/${url.hostname}:${port}`;
  const raw = url.pathname.split('/').slice(1);
  const trailingSlash = raw.length > 0 && raw[raw.length - 1] === '';
  if (trailingSlash) raw.pop();
  const segments: string[] = [];
  for (const segment of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw invalid(); // a malformed escape or bytes that are not UTF-8
    }
    // Escaped separators and dots would name another path than the one the server sees.
    if (decoded === '' || decoded === '.' || decoded === '..' || forbiddenDecoded.test(decoded)) throw invalid();
    segments.push(decoded);
  }
  return { url, authority, segments, trailingSlash };
}

/**
 * The canonical resource of an http(s) URL: `https:/<host>:<port>/<seg>/…`, path segments
 * percent-decoded; query and fragment are not part of it; a trailing `/` is dropped (so
 * `https://h/a/` and `https://h/a` are the same resource, and `https://h/` is `https:/h:443`).
 * Refuses (`ResourceRefusedError('invalid_resource')`) other schemes, userinfo, a decoded `/`, `\`,
 * control character or dot segment, a doubled `/`, and anything the resource grammar refuses
 * (a `%` after decoding, text that is not NFC…). Never rewrites what it refuses.
 */
export function urlResource(input: string | URL): string {
  return parseUrlResource(input).resource;
}

export function parseUrlResource(input: string | URL): ParsedUrlResource {
  const { url, authority, segments } = parse(input);
  const resource = segments.length === 0 ? authority : `${authority}/${segments.join('/')}`;
  if (!isCanonicalResource(resource)) throw invalid();
  const port = Number(authority.slice(authority.lastIndexOf(':') + 1));
  return { url, resource, host: url.hostname, port };
}

/**
 * The scope of a URL: a path ending in `/` covers what is below it (`https://example.com/` →
 * `https:/example.com:443/`, `https://h/v1/` → `https:/h:443/v1/`); otherwise only that resource.
 * Throws a TypeError for a URL with no canonical resource (scopes are the host's).
 */
export function urlScope(input: string | URL): string {
  let parsed;
  try {
    parsed = parse(input);
  } catch {
    throw new TypeError('urlScope needs an http(s) URL without userinfo whose path is canonical');
  }
  const path = parsed.segments.length === 0 ? parsed.authority : `${parsed.authority}/${parsed.segments.join('/')}`;
  const scope = parsed.trailingSlash ? `${path}/` : path;
  if (!isCanonicalScope(scope)) throw new TypeError('urlScope needs an http(s) URL whose path is canonical');
  return scope;
}
