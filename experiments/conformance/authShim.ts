// The suite's client sends no credential, and `atc gateway` refuses any request without one. This
// loopback shim (harness only) adds `Authorization: Bearer <token>` to each request that has none
// and streams everything else both ways as it is, the Host and Origin headers included: the
// gateway, not the shim, answers the suite's DNS-rebinding scenario.
import http from 'node:http';

export interface AuthShim {
  close(): Promise<void>;
}

export async function startAuthShim(port: number, target: { readonly host: string; readonly port: number }, bearer: string): Promise<AuthShim> {
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, ...(req.headers.authorization === undefined ? { authorization: `Bearer ${bearer}` } : {}) };
    const forwarded = http.request({ host: target.host, port: target.port, method: req.method, path: req.url, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    forwarded.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
