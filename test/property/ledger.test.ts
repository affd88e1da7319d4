import fc from 'fast-check';
import { createLedger, grantsOf, replay, verify, type Ledger, type LedgerEvent } from '../../src';
import { manualClock } from '../support/fixtures';

type Op =
  | { kind: 'invoke'; grant: number; tool: 'w' | 'r'; path: string; text: string }
  | { kind: 'revoke'; grant: number; abort: boolean }
  | { kind: 'advance'; ms: number }
  | { kind: 'issue'; calls: number; bytes: number; ttl: number; scope: string };

const pathArb = fc.constantFrom('drafts/a', 'drafts/b/c', 'drafts/../x', 'drafts-x/a', 'secrets/a', 'drafts//a', 'drafts/%2e%2e');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('invoke' as const), grant: fc.nat(4), tool: fc.constantFrom('w' as const, 'r' as const), path: pathArb, text: fc.string({ maxLength: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), grant: fc.nat(4), abort: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('issue' as const), calls: fc.nat(6), bytes: fc.nat(300), ttl: fc.integer({ min: 1, max: 2000 }), scope: fc.constantFrom('notes:/drafts/', 'notes:/') }) },
);

/** Log-order invariants: no budget overrun, nothing admitted after revocation or outside the window. */
function checkLogInvariants(events: readonly LedgerEvent[]): void {
  const grants = new Map<string, { calls: number; bytes: number; used: { calls: number; bytes: number }; revoked: boolean; notBefore: number; expiresAt: number }>();
  for (const e of events) {
    if (e.type === 'grant.issued') grants.set(e.grantId, { calls: e.scope.budget.calls, bytes: e.scope.budget.inputBytes, used: { calls: 0, bytes: 0 }, revoked: false, notBefore: e.scope.notBefore, expiresAt: e.scope.expiresAt });
    if (e.type === 'grant.revoked') (grants.get(e.grantId) as { revoked: boolean }).revoked = true;
    if (e.type === 'call.admitted') {
      const g = grants.get(e.grantId);
      if (g === undefined) throw new Error('admitted for an unknown grant');
      if (g.revoked) throw new Error(`admitted after revocation at seq ${e.seq}`);
      if (e.at < g.notBefore || e.at >= g.expiresAt) throw new Error(`admitted outside the validity window at seq ${e.seq}`);
      g.used.calls += e.reserved.calls;
      g.used.bytes += e.reserved.inputBytes;
      if (g.used.calls > g.calls || g.used.bytes > g.bytes) throw new Error(`budget exceeded at seq ${e.seq}`);
    }
    if (e.type === 'call.failed') {
      const g = grants.get(e.grantId);
      if (g) { g.used.calls -= e.refunded.calls; g.used.bytes -= e.refunded.inputBytes; }
    }
  }
}

async function setup(clock: ReturnType<typeof manualClock>, wrapRun: <T>(value: T) => Promise<T>, onToolError: 'consume' | 'refund'): Promise<Ledger> {
  const ledger = createLedger({ clock: clock.now, onToolError });
  await ledger.registerTool<{ path: string; text: string }>({
    name: 'notes.write',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
    resources: (a) => [`notes:/${a.path}`],
    run: (a) => (a.text.startsWith('!') ? wrapRun(0).then(() => { throw new Error('fail'); }) : wrapRun(a.text.length)),
  });
  await ledger.registerTool<{ path: string }>({
    name: 'notes.read',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    resources: (a) => [`notes:/${a.path}`],
    run: () => wrapRun('r'),
  });
  return ledger;
}

describe('properties of the ledger under any sequence and interleaving', () => {
  it('never exceeds a budget, never admits after revocation or expiry, and replays to the live state', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.constantFrom('consume' as const, 'refund' as const), async (s, ops, onToolError) => {
        const clock = manualClock(0);
        const ledger = await setup(clock, (v) => s.schedule(Promise.resolve(v)), onToolError);
        const tokens: { token: string; grantId: string }[] = [];
        for (let i = 0; i < 3; i++) tokens.push(await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: ['notes:/drafts/'], expiresAt: 1000 + i * 500, budget: { calls: 2 + i, inputBytes: 120 + 60 * i } }));
        const pending: Promise<unknown>[] = [];
        for (const op of ops) {
          // Each operation starts when the scheduler says so, interleaved with tool completions.
          pending.push(
            s.schedule(Promise.resolve(op), JSON.stringify(op)).then(async () => {
              const target = tokens[op.kind === 'invoke' || op.kind === 'revoke' ? op.grant % (tokens.length + 1) : 0];
              switch (op.kind) {
                case 'invoke':
                  return ledger.invoke(target?.token ?? 'atc_unknown', op.tool === 'w' ? 'notes.write' : 'notes.read', op.tool === 'w' ? { path: op.path, text: op.text } : { path: op.path });
                case 'revoke':
                  return target ? ledger.revoke(target.grantId, { abortInFlight: op.abort }) : undefined;
                case 'advance':
                  return clock.advance(op.ms);
                case 'issue':
                  return tokens.push(await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: [op.scope], expiresAt: clock.now() + op.ttl, budget: { calls: op.calls, inputBytes: op.bytes } }));
              }
            }),
          );
        }
        // Tool runs are scheduled only once their call is admitted, so keep releasing until all is settled.
        let settled = false;
        const all = Promise.all(pending).then(() => (settled = true));
        while (!settled) {
          await s.waitAll();
          await new Promise((resolve) => setImmediate(resolve));
        }
        await all;
        await ledger.close();
        const events = ledger.events();
        checkLogInvariants(events);
        for (const grant of grantsOf(ledger.state())) {
          expect(grant.used.calls).toBeLessThanOrEqual(grant.scope.budget.calls);
          expect(grant.used.inputBytes).toBeLessThanOrEqual(grant.scope.budget.inputBytes);
        }
        expect(replay(events)).toEqual(ledger.state());
        expect(verify(events).problems).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('produces a log of thousands of random calls that verifies clean', async () => {
    const clock = manualClock(0);
    const ledger = await setup(clock, (v) => Promise.resolve(v), 'refund');
    const rng = fc.sample(fc.tuple(fc.nat(9), pathArb, fc.string({ maxLength: 20 })), { numRuns: 3000, seed: 42 });
    const grants = [];
    for (let i = 0; i < 10; i++) grants.push(await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: ['notes:/drafts/'], expiresAt: 5_000 + i * 1_000, budget: { calls: 100 + i * 50, inputBytes: 10_000 } }));
    let batch: Promise<unknown>[] = [];
    for (const [i, [g, path, text]] of rng.entries()) {
      batch.push(ledger.invoke((grants[g] as { token: string }).token, 'notes.write', { path, text }));
      if (i % 97 === 0) { await Promise.all(batch); batch = []; clock.advance(7); }
      if (i === 2000) await ledger.revoke((grants[3] as { grantId: string }).grantId);
    }
    await Promise.all(batch);
    await ledger.close();
    const events = ledger.events();
    expect(events.length).toBeGreaterThan(3000);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['tool.registered', 'grant.issued', 'grant.revoked', 'call.admitted', 'call.rejected', 'call.completed', 'call.failed']));
    expect(verify(events)).toEqual({ ok: true, checked: events.length, problems: [] });
    checkLogInvariants(events);
  });
});
