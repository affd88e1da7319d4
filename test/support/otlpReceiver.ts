import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What an OTLP/HTTP (JSON) receiver on loopback was sent, by path (`/v1/traces`, `/v1/metrics`). */
export interface OtlpReceiver {
  readonly url: string;
  bodies(path: string): unknown[];
  /** Every body received, as text (for scanning that no secret was exported). */
  raw(): string;
  /** Resolves once `ready` holds for what was received (bounded: the exporter, not a timer, decides). */
  until(ready: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const received: { path: string; text: string }[] = [];
  let wake: (() => void) | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', text: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      wake?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies: (path) => received.filter((r) => r.path === path).map((r) => JSON.parse(r.text) as unknown),
    raw: () => received.map((r) => r.text).join('\n'),
    async until(ready, timeoutMs = 20_000) {
      let timedOut = false;
      const deadline = setTimeout(() => {
        timedOut = true;
        wake?.();
      }, timeoutMs);
      try {
        while (!ready() && !timedOut) await new Promise<void>((resolve) => (wake = resolve));
      } finally {
        clearTimeout(deadline);
        wake = undefined;
      }
      if (!ready()) throw new Error('the OTLP receiver never got what the test waited for');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OTLP/JSON span, as far as the tests read it. */
export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  readonly status?: { readonly code?: number; readonly message?: string };
}

interface OtlpAttribute {
  readonly key: string;
  readonly value: { readonly stringValue?: string; readonly intValue?: string | number; readonly boolValue?: boolean; readonly doubleValue?: number };
}

/** Flattens `/v1/traces` bodies into spans with plain attribute maps. */
export function spansOf(bodies: unknown[]): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const body of bodies as { resourceSpans?: { scopeSpans?: { spans?: (Omit<OtlpSpan, 'attributes'> & { attributes?: OtlpAttribute[] })[] }[] }[] }[]) {
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) {
      const attributes: Record<string, string | number | boolean> = {};
      for (const a of s.attributes ?? []) {
        const v = a.value;
        attributes[a.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? '';
      }
      spans.push({ ...s, attributes });
    }
  }
  return spans;
}
