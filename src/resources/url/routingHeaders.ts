/**
 * Request headers that choose which virtual host or path a server (or the reverse proxy in front of
 * it) serves. `ctx.fetch` checks the URL's host and path against the grant and logs them, so a
 * caller must not pick another target behind that check: these are refused, by name, before any hop
 * is decided or any connection is opened (issue 30, item 7). `Host` is then always the URL's own.
 * HTTP/2 pseudo-headers (`:authority`) are not valid header names here at all.
 */
const routingHeaderNames: ReadonlySet<string> = new Set([
  'host',
  // RFC 7239, and the de-facto headers reverse proxies set and applications trust for host and scheme.
  'forwarded',
  'x-host',
  'x-original-host',
  'x-http-host-override',
  // Path overrides (IIS, Symfony, Zend…): a path behind the checked one.
  'x-original-url',
  'x-rewrite-url',
]);

/** Whether a (lower-case) header name picks the target: one of the names above, or any `x-forwarded-*`. */
export function isRoutingHeader(name: string): boolean {
  return routingHeaderNames.has(name) || name.startsWith('x-forwarded-');
}

/**
 * The caller's headers as a plain map of lower-case names. Throws TypeError for a routing header
 * (naming it) or a header the Fetch rules refuse; the message never holds a header value.
 */
export function callerHeaders(init: Record<string, string> | ReadonlyArray<readonly [string, string]> | Headers | undefined): Record<string, string> {
  let parsed: Headers;
  try {
    parsed = new Headers(init as ConstructorParameters<typeof Headers>[0]);
  } catch {
    // The platform's message can echo the offending value.
    throw new TypeError('ctx.fetch: a header name or value is not valid');
  }
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  parsed.forEach((value, name) => {
    if (isRoutingHeader(name)) throw new TypeError(`ctx.fetch: the ${name} header is not the caller's to set (the URL decides the host and path that are checked and reached)`);
    out[name] = value;
  });
  return out;
}
