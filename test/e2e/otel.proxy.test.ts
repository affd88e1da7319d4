import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { otlpReceiver, spansOf, type OtlpReceiver } from '../support/otlpReceiver';
import { loggingServer, proxyClient, serverLog, tempDir, writeJson } from '../support/mcpProxy';

// Real processes: the official client → `atc proxy --otel` → the logging test server; the proxy
// exports over OTLP/HTTP to a receiver on loopback, as it would to a collector.
const traceId = '0af7651916cd43dd8448eb211c80319c';
const clientSpanId = 'b7ad6b7169203331';
const secret = 'argument-value-never-exported';

const policy = {
  tools: ['echo'],
  args: { echo: { properties: { text: { maxLength: 40 } } } },
  expiresIn: '1h',
  budget: { calls: 10, inputBytes: 100_000 },
};

function logEvents(file: string): LedgerEvent[] {
  const ledger = createLedger({ store: sqliteStore({ path: file, readonly: true }) });
  const events = [...ledger.events()];
  void ledger.close();
  return events;
}

describe('atc proxy --otel', () => {
  let tmp: ReturnType<typeof tempDir>;
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    tmp = tempDir();
    receiver = await otlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    tmp.cleanup();
  });

  async function run(): Promise<{ ledger: string; log: string }> {
    const ledger = tmp.file('ledger.sqlite');
    const log = tmp.file('server.jsonl');
    const proxy = await proxyClient(['--otel', '--ledger', ledger, '--policy', writeJson(tmp.file('policy.json'), policy), '--', process.execPath, loggingServer, '--log', log], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'proxy-under-test',
    });
    await proxy.client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: secret }, _meta: { traceparent: `00-${traceId}-${clientSpanId}-01` } } }, CallToolResultSchema);
    await proxy.client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: `${secret}-${'x'.repeat(40)}` } } }, CallToolResultSchema);
    await proxy.close();
    // The proxy exports what it buffered as it exits.
    await receiver.until(() => spansOf(receiver.bodies('/v1/traces')).length >= 5);
    return { ledger, log };
  }

  it('continues the client traceparent: server span, the ledger execute_tool span with its event, and a client span whose context reaches the upstream', async () => {
    const { ledger, log } = await run();
    const spans = spansOf(receiver.bodies('/v1/traces')).filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.name === 'tools/call echo' && s.kind === 2);
    const executed = spans.find((s) => s.name === 'execute_tool echo');
    const upstream = spans.find((s) => s.kind === 3);
    expect(server).toMatchObject({ kind: 2, parentSpanId: clientSpanId, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' } });
    const admitted = logEvents(ledger).find((e) => e.type === 'call.admitted') as LedgerEvent;
    expect(executed).toMatchObject({ parentSpanId: server?.spanId, attributes: { 'atc.decision': 'admitted', 'atc.event.seq': admitted.seq, 'atc.event.hash': admitted.hash } });
    expect(upstream?.parentSpanId).toBe(executed?.spanId);
    const forwarded = serverLog(log).find((r) => r.kind === 'message' && r.message?.method === 'tools/call');
    expect((forwarded?.message?.params as { _meta?: { traceparent?: string } })._meta?.traceparent).toBe(`00-${traceId}-${upstream?.spanId}-01`);
  });

  it('exports the rejection as an error span and exports no argument value or token digest', async () => {
    const { ledger } = await run();
    const rejected = spansOf(receiver.bodies('/v1/traces')).find((s) => s.attributes['atc.decision'] === 'rejected');
    expect(rejected).toMatchObject({ name: 'execute_tool echo', status: { code: 2 }, attributes: { 'atc.reason': 'argument_not_permitted' } });
    const digest = logEvents(ledger).find((e) => e.type === 'grant.issued') as LedgerEvent & { tokenDigest: string };
    expect(receiver.raw()).not.toContain(secret);
    expect(receiver.raw()).not.toContain(digest.tokenDigest);
    expect(receiver.raw()).toContain('proxy-under-test');
  });
});
