import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLedger, type LedgerEvent } from '../../src';
import { parsePolicy } from '../../src/integrations/mcp/policy';
import { diffPolicy } from '../../src/policy/policyDiff';

// diffPolicy on two rules the log records beyond tools and budgets: the cost of metered calls, and
// every ctx.fetch hop (its resource and address), each re-decided against the candidate.
const t0 = Date.parse('2026-03-01T09:00:00Z');
const candidate = (value: object) => parsePolicy(JSON.stringify({ expiresIn: '1h', ...value }));
const moves = (d: ReturnType<typeof diffPolicy>): string[] => d.changes.map((c) => `${c.tool}${c.hop !== undefined ? ` hop ${c.hop}` : ''} ${c.before} → ${c.after}${c.assuming ? ` assuming ${c.assuming.join(',')}` : ''}`);

describe('atc policy diff: meters', () => {
  let events: readonly LedgerEvent[];
  beforeAll(async () => {
    let now = t0;
    const ledger = createLedger({ clock: () => now });
    const amount = { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] };
    await ledger.registerTool<{ amount: number }>({ name: 'pay', inputSchema: amount, cost: (args) => ({ usd_micros: args.amount }), run: () => 'paid' });
    await ledger.registerTool<{ amount: number }>({ name: 'refund', inputSchema: amount, cost: (args) => ({ usd_micros: args.amount }), run: () => 'refunded' });
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: t0 + 3_600_000, budget: { calls: 10, inputBytes: 1_000, meters: { usd_micros: 1_000 } } });
    for (const [tool, value] of [['pay', 400], ['pay', 400], ['pay', 400], ['refund', 100]] as const) {
      now += 1_000;
      await ledger.invoke(token, tool, { amount: value });
    }
    events = ledger.events();
    await ledger.close();
  });
  const budget = (usd: number) => ({ calls: 10, inputBytes: 1_000, meters: { usd_micros: usd } });

  it('re-decides meter caps from the costs the log recorded', () => {
    expect(moves(diffPolicy(events, candidate({ tools: ['pay'], budget: budget(1_000) })))).toEqual([]);
    expect(moves(diffPolicy(events, candidate({ tools: ['pay'], budget: budget(500) })))).toEqual(['pay admitted → meter_budget_exhausted']);
    // The refused third payment logged its cost, so a larger cap settles it.
    expect(moves(diffPolicy(events, candidate({ tools: ['pay'], budget: budget(2_000) })))).toEqual(['pay meter_budget_exhausted → admitted']);
  });

  it('leaves a cost that was never logged open, counted under meters', () => {
    const diff = diffPolicy(events, candidate({ tools: ['pay', 'refund'], budget: budget(1_000) }));
    // It never reached the argument, resource or cost checks in the log.
    expect(moves(diff)).toEqual(['refund tool_not_granted → admitted assuming input_schema,resources,meters']);
    expect(diff.open).toEqual({ input_schema: 1, argument_narrowing: 0, resources: 1, meters: 1, approvals: 0 });
  });
});

describe('atc policy diff: ctx.fetch hops', () => {
  let server: http.Server;
  let port: number;
  let events: readonly LedgerEvent[];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/r') res.writeHead(302, { location: '/b' }).end();
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const now = t0;
    const ledger = createLedger({ clock: () => now, resolveHost: async () => ['127.0.0.1'] });
    await ledger.registerTool({ name: 'web', inputSchema: { type: 'object', properties: {} }, run: async (_args, ctx) => (await ctx.fetch(`http://127.0.0.1:${port}/r`)).status });
    const { token } = await ledger.issue({ tools: ['web'], resources: [`http:/127.0.0.1:${port}/`], expiresAt: t0 + 3_600_000, budget: { calls: 10, inputBytes: 1_000 } });
    expect(await ledger.invoke(token, 'web', {})).toMatchObject({ status: 'completed', value: 200 });
    events = ledger.events();
    await ledger.close();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lists a hop the candidate scopes would refuse, with its number', () => {
    expect(events.filter((e) => e.type === 'fetch.hop')).toHaveLength(2);
    const same = diffPolicy(events, candidate({ tools: ['web'], resources: { web: [] }, scopes: [`http:/127.0.0.1:${port}/`], budget: { calls: 10, inputBytes: 1_000 } }));
    expect(moves(same)).toEqual([]);
    const narrower = diffPolicy(events, candidate({ tools: ['web'], resources: { web: [] }, scopes: [`http:/127.0.0.1:${port}/r`], budget: { calls: 10, inputBytes: 1_000 } }));
    expect(moves(narrower)).toEqual(['web hop 1 allowed → resource_not_permitted']);
    // What the call itself named at admission is not in the log: under narrower scopes it is open.
    expect(narrower.open.resources).toBe(1);
  });
});
