/**
 * DNS-rebinding protection: a browser page on another site that resolves its own name to the
 * gateway's address sends its own Host and Origin. Only the listen address and publicUrl's host
 * are served, and only publicUrl's origin and the configured ones may send an Origin.
 */
export function allowedHost(host: string | undefined, publicUrl: URL, listenHost: string): boolean {
  if (host === undefined) return false;
  const presented = host.toLowerCase();
  return presented === publicUrl.host.toLowerCase() || presented === listenHost.toLowerCase();
}

/** No Origin (not a browser): allowed; otherwise it must be publicUrl's origin or a configured one. */
export function allowedOrigin(origin: string | undefined, publicUrl: URL, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  return origin === publicUrl.origin || allowed.includes(origin);
}
