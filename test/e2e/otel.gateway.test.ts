import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { otlpReceiver, spansOf, type OtlpReceiver } from '../support/otlpReceiver';
import { atc, serverLog, tempDir, writeJson } from '../support/mcpProxy';
import { gatewayClient, startGatewayProcess, stdioUpstream } from '../support/gateway';

// Real processes: the official client → `atc gateway --otel` (Streamable HTTP) → the logging test
// server over stdio; the gateway exports over OTLP/HTTP to a receiver on loopback, as it would to a
// collector, and flushes what it buffered when SIGTERM stops it.
jest.setTimeout(60_000);
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const clientSpanId = '00f067aa0ba902b7';
const secret = 'gateway-argument-value-never-exported';

function logEvents(file: string): LedgerEvent[] {
  const ledger = createLedger({ store: sqliteStore({ path: file, readonly: true }) });
  const events = [...ledger.events()];
  void ledger.close();
  return events;
}

describe('atc gateway --otel', () => {
  const tmp = tempDir();
  const ledgerFile = tmp.file('gateway.sqlite');
  const upstreamLog = tmp.file('upstream.jsonl');
  let receiver: OtlpReceiver;
  let token: string;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    const gateway = await startGatewayProcess(
      tmp.file('gateway.json'),
      { ledger: './gateway.sqlite', listen: '127.0.0.1:0', publicUrl: 'http://127.0.0.1:0/mcp', upstreams: { files: stdioUpstream(upstreamLog) }, auth: { tokens: true } },
      { args: ['--otel'], env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway-under-test' } },
    );
    const policy = writeJson(tmp.file('policy.json'), { tools: ['files__echo'], args: { files__echo: { properties: { text: { maxLength: 40 } } } }, expiresIn: '1h', budget: { calls: 10, inputBytes: 100_000 } });
    const issued = atc(['issue', '--ledger', ledgerFile, '--policy', policy]);
    token = (JSON.parse(issued.stdout) as { token: string }).token;
    const client = await gatewayClient(gateway.url, token);
    await client.request({ method: 'tools/call', params: { name: 'files__echo', arguments: { text: secret }, _meta: { traceparent: `00-${traceId}-${clientSpanId}-01` } } }, CallToolResultSchema);
    await client.request({ method: 'tools/call', params: { name: 'files__echo', arguments: { text: `${secret}-${'x'.repeat(40)}` } } }, CallToolResultSchema);
    await client.close();
    expect(await gateway.stop('SIGTERM')).toBe(0);
    await receiver.until(() => spansOf(receiver.bodies('/v1/traces')).length >= 5);
  });

  afterAll(async () => {
    await receiver.close();
    tmp.cleanup();
  });

  it("continues the client's traceparent: a server span with the MCP attributes, the ledger's execute_tool span with its event, and a client span whose context reaches the upstream", () => {
    const spans = spansOf(receiver.bodies('/v1/traces')).filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.name === 'tools/call files__echo' && s.kind === 2);
    const executed = spans.find((s) => s.name === 'execute_tool files__echo');
    const upstream = spans.find((s) => s.kind === 3);
    expect(server).toMatchObject({ parentSpanId: clientSpanId, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'files__echo', 'gen_ai.operation.name': 'execute_tool' } });
    expect(typeof server?.attributes['mcp.session.id']).toBe('string');
    const admitted = logEvents(ledgerFile).find((e) => e.type === 'call.admitted') as LedgerEvent;
    expect(executed).toMatchObject({ parentSpanId: server?.spanId, attributes: { 'atc.decision': 'admitted', 'atc.event.seq': admitted.seq, 'atc.event.hash': admitted.hash } });
    expect(upstream?.parentSpanId).toBe(executed?.spanId);
    const forwarded = serverLog(upstreamLog).find((r) => r.kind === 'message' && r.message?.method === 'tools/call');
    expect((forwarded?.message?.params as { _meta?: { traceparent?: string } })._meta?.traceparent).toBe(`00-${traceId}-${upstream?.spanId}-01`);
  });

  it('exports the rejection as an error span, and no argument value, token or token digest', () => {
    const rejected = spansOf(receiver.bodies('/v1/traces')).find((s) => s.attributes['atc.decision'] === 'rejected');
    expect(rejected).toMatchObject({ name: 'execute_tool files__echo', status: { code: 2 }, attributes: { 'atc.reason': 'argument_not_permitted' } });
    const digest = logEvents(ledgerFile).find((e) => e.type === 'grant.issued') as LedgerEvent & { tokenDigest: string };
    expect(receiver.raw()).not.toContain(secret);
    expect(receiver.raw()).not.toContain(token);
    expect(receiver.raw()).not.toContain(digest.tokenDigest);
    expect(receiver.raw()).toContain('gateway-under-test');
  });
});
