import { isIP } from 'node:net';

/** Whether a host name or address stays on this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * The `Host` header values a loopback server answers. Any other value means the request was routed
 * here by a name the user did not type (DNS rebinding: a web page whose host name now resolves to
 * 127.0.0.1 could otherwise read the log), so it is refused.
 */
export function loopbackHostHeaders(port: number): ReadonlySet<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}
