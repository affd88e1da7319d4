import type { IncomingMessage, ServerResponse } from 'node:http';

/** Writes a JSON body (no-store: nothing here is for caches). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  // A body left unread (refused before reading it) is not drained: the connection closes instead.
  const unread = res.req !== undefined && !res.req.complete ? { connection: 'close' } : {};
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...unread, ...headers });
  res.end(text);
}

/** A JSON-RPC error answer with an HTTP status (the SDK's own shape for transport-level errors). */
export function sendRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

export type BodyRead = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly status: 400 | 413; readonly message: string };

/**
 * A request's JSON body, read only up to `bytesMax` (a longer declared or actual body is 413 and the
 * rest is not read). Never throws on what the client sends.
 */
export function readJsonBody(req: IncomingMessage, bytesMax: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > bytesMax) return Promise.resolve({ ok: false, status: 413, message: `the request body is larger than ${bytesMax} bytes (limits.requestBytesMax)` });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (read: BodyRead): void => {
      if (done) return;
      done = true;
      resolve(read);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > bytesMax) {
        finish({ ok: false, status: 413, message: `the request body is larger than ${bytesMax} bytes (limits.requestBytesMax)` });
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
    req.on('end', () => {
      try {
        finish({ ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        finish({ ok: false, status: 400, message: 'the request body is not JSON' });
      }
    });
  });
}
