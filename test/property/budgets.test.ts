import fc from 'fast-check';
import { createLedger, evolve, grantsOf, initialState, replay, verify, type EventOf, type KeyedInvokeOutcome, type LedgerEvent, type LedgerState } from '../../src';
import { manualClock } from '../support/fixtures';

// Issue 12's property test: random workloads with meters and rate windows on a root and a child,
// driven call by call through the public API against a small reference model. Retries and
// timeouts: the second property below.

interface Workload {
  readonly onToolError: 'consume' | 'refund';
  readonly root: { readonly usd: number; readonly rate: { readonly calls: number; readonly windowMs: number } };
  readonly child: { readonly usd: number; readonly rate: { readonly calls: number; readonly windowMs: number } | undefined };
  readonly calls: readonly Step[];
}
interface Step {
  /** 0: the root's token, 1: the child's. */
  readonly who: 0 | 1;
  readonly cost: number;
  readonly report: number | undefined;
  readonly fail: boolean;
  /** ms the clock moves before the call. */
  readonly advance: number;
}

const rateArb = fc.record({ calls: fc.integer({ min: 1, max: 4 }), windowMs: fc.integer({ min: 1, max: 50 }) });
const workloadArb: fc.Arbitrary<Workload> = fc.record({
  onToolError: fc.constantFrom('consume' as const, 'refund' as const),
  root: fc.record({ usd: fc.nat(200), rate: rateArb }),
  child: fc.record({ usd: fc.nat(250), rate: fc.option(rateArb, { nil: undefined }) }),
  calls: fc.array(
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      cost: fc.nat(60),
      report: fc.option(fc.nat(80), { nil: undefined }),
      fail: fc.boolean(),
      advance: fc.nat(30),
    }),
    { maxLength: 40 },
  ),
});

/** The reference model of one grant: its meter cap and used, its rate window and every admission time. */
interface ModelGrant {
  readonly limit: number | undefined;
  used: number;
  readonly rate: { readonly calls: number; readonly windowMs: number } | undefined;
  readonly times: number[];
}

type Expected = { status: 'completed' | 'failed' } | { status: 'rejected'; reason: 'meter_budget_exhausted' } | { status: 'rejected'; reason: 'rate_limited'; retryAfterMs: number };

function modelCall(chain: ModelGrant[], step: Step, now: number, refund: boolean): Expected {
  for (const g of chain) if (g.limit !== undefined && g.used + step.cost > g.limit) return { status: 'rejected', reason: 'meter_budget_exhausted' };
  let wait = 0;
  for (const g of chain) {
    if (g.rate === undefined) continue;
    const inWindow = g.times.filter((t) => t > now - (g.rate as { windowMs: number }).windowMs).sort((a, b) => a - b);
    if (inWindow.length >= g.rate.calls) wait = Math.max(wait, (inWindow[inWindow.length - g.rate.calls] as number) + g.rate.windowMs - now);
  }
  if (wait > 0) return { status: 'rejected', reason: 'rate_limited', retryAfterMs: wait };
  const charge = step.fail && refund ? 0 : step.report === undefined ? step.cost : Math.min(step.report, step.cost);
  for (const g of chain) {
    if (g.limit !== undefined) g.used += charge;
    if (g.rate !== undefined) g.times.push(now);
  }
  return { status: step.fail ? 'failed' : 'completed' };
}

/** Every grant's meters used, folded event by event: never above its cap at any log prefix. */
function metersWithinCapsAtEveryPrefix(events: readonly LedgerEvent[]): boolean {
  let state: LedgerState = initialState;
  for (const event of events) {
    state = evolve(state, event);
    for (const grant of grantsOf(state)) {
      const caps = grant.scope.budget.meters ?? {};
      for (const name of Object.keys(caps)) {
        const used = grant.metersUsed?.[name] ?? 0;
        if (used < 0 || used > (caps[name] as number)) return false;
      }
    }
  }
  return true;
}

describe('budgets: meters and rate windows against a reference model', () => {
  it('every outcome, usage and rate window matches the model; no meter is ever exceeded; verify and replay agree', async () => {
    await fc.assert(
      fc.asyncProperty(workloadArb, async (w) => {
        const clock = manualClock();
        const ledger = createLedger({ clock: clock.now, onToolError: w.onToolError });
        await ledger.registerTool<{ cost: number; report?: number; fail: boolean }>({
          name: 'metered',
          inputSchema: { type: 'object', properties: { cost: { type: 'integer' }, report: { type: 'integer' }, fail: { type: 'boolean' } }, required: ['cost', 'fail'] },
          cost: (args) => ({ usd: args.cost }),
          run: (args, ctx) => {
            if (args.report !== undefined) ctx.report({ usd: args.report });
            if (args.fail) throw new Error('tool failed');
            return 'ok';
          },
        });
        const root = await ledger.issue({ tools: ['metered'], expiresAt: clock.now() + 3_600_000, budget: { calls: 1_000, inputBytes: 1_000_000, meters: { usd: w.root.usd }, rate: w.root.rate } });
        const asked = await ledger.attenuate(root.token, { budget: { meters: { usd: w.child.usd }, ...(w.child.rate !== undefined ? { rate: w.child.rate } : {}) } });
        const model: ModelGrant[] = [{ limit: w.root.usd, used: 0, rate: w.root.rate, times: [] }];
        // A child may not ask for more than the root has (here: its whole cap, nothing is used yet).
        if (w.child.usd > w.root.usd) {
          expect(asked).toMatchObject({ status: 'rejected', reason: 'attenuation_widens' });
        } else {
          expect(asked.status).toBe('issued');
          model.push({ limit: w.child.usd, used: 0, rate: w.child.rate, times: [] });
        }
        const tokens = [root.token, asked.status === 'issued' ? asked.token : undefined];
        const ids = [root.grantId, asked.status === 'issued' ? asked.grantId : undefined];
        for (const step of w.calls) {
          const token = tokens[step.who];
          if (token === undefined) continue;
          clock.advance(step.advance);
          const chain = step.who === 0 ? [model[0] as ModelGrant] : [model[0] as ModelGrant, model[1] as ModelGrant];
          const expected = modelCall(chain, step, clock.now(), w.onToolError === 'refund');
          const outcome = await ledger.invoke(token, 'metered', { cost: step.cost, fail: step.fail, ...(step.report !== undefined ? { report: step.report } : {}) });
          expect(outcome).toMatchObject(expected);
          for (let i = 0; i < model.length; i++) {
            const g = model[i] as ModelGrant;
            const usage = ledger.usage(ids[i] as string);
            expect(usage.meters).toEqual({ usd: { limit: g.limit, used: g.used } });
            if (g.rate !== undefined) expect(usage.rate?.inWindow).toBe(g.times.filter((t) => t > clock.now() - (g.rate as { windowMs: number }).windowMs).length);
          }
        }
        const events = ledger.events();
        expect(metersWithinCapsAtEveryPrefix(events)).toBe(true);
        expect(verify(events)).toMatchObject({ ok: true, problems: [] });
        expect(replay(events)).toEqual(ledger.state());
        await ledger.close();
      }),
      { numRuns: 150 },
    );
  });
});

// Random workloads of keyed and plain calls, tools that finish or hang, time passing and timers
// firing, driven call by call through the public API and checked against a small reference model of
// the rules in docs/budgets.md (written independently of the decider): a retry never reserves, every
// timed-out call is settled exactly once and never before its deadline, verify is clean and replay
// equals the state.

type Op =
  | { readonly kind: 'call'; readonly key: number | undefined; readonly args: number; readonly hang: boolean }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'timers' }
  | { readonly kind: 'release' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('call' as const), key: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), args: fc.integer({ min: 0, max: 1 }), hang: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 700 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'timers' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'release' as const }) },
);

const timeoutMs = 500;
const ttlMs = 2_000;
const callsMax = 6;

/** The rules, stated plainly: what a call must be decided as. */
class ReferenceModel {
  private readonly bindings = new Map<number, { args: number; callId: string; expiresAt: number }>();
  admitted = 0;

  expect(key: number | undefined, args: number, at: number): { kind: 'replay'; of: string } | { kind: 'rejected'; reason: string } | { kind: 'admitted' } {
    if (key !== undefined) {
      const bound = this.bindings.get(key);
      if (bound !== undefined && at < bound.expiresAt) return bound.args === args ? { kind: 'replay', of: bound.callId } : { kind: 'rejected', reason: 'idempotency_conflict' };
    }
    if (this.admitted + 1 > callsMax) return { kind: 'rejected', reason: 'call_budget_exhausted' };
    return { kind: 'admitted' };
  }

  admit(key: number | undefined, args: number, callId: string, at: number): void {
    this.admitted++;
    if (key !== undefined) this.bindings.set(key, { args, callId, expiresAt: at + ttlMs });
  }
}

describe('retries and timeouts: random workloads against a reference model', () => {
  it('never double-reserves a retry, times out every overdue call exactly once, and verify and replay agree', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const clock = manualClock();
        const timers: (() => void)[] = [];
        const ledger = createLedger({ clock: clock.now, idempotencyTtlMs: ttlMs, setTimer: (callback) => (timers.push(callback), () => undefined) });
        const hanging: ((value: string) => void)[] = [];
        await ledger.registerTool({
          name: 'work',
          inputSchema: { type: 'object', properties: { n: { type: 'integer' }, hang: { type: 'boolean' } } },
          run: (args) => (args.hang === true ? new Promise<string>((resolve) => hanging.push(resolve)) : `done ${String(args.n)}`),
        });
        const { grantId, token } = await ledger.issue({ tools: ['work'], expiresAt: clock.now() + 3_600_000, budget: { calls: callsMax, inputBytes: 100_000 }, callTimeoutMs: timeoutMs });
        const model = new ReferenceModel();
        const flush = async (): Promise<void> => {
          for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        };
        const pending: Promise<{ outcome: KeyedInvokeOutcome; expected: ReturnType<ReferenceModel['expect']> }>[] = [];
        for (const o of ops) {
          if (o.kind === 'advance') clock.advance(o.ms);
          else if (o.kind === 'timers') timers.splice(0).forEach((fire) => fire());
          else if (o.kind === 'release') hanging.splice(0).forEach((release) => release('late'));
          else {
            // The arguments the binding is matched on: both fields of the call.
            const argsKey = o.args * 2 + (o.hang ? 1 : 0);
            const expected = model.expect(o.key, argsKey, clock.now());
            const before = ledger.events().length;
            const args = { n: o.args, hang: o.hang };
            const call: Promise<KeyedInvokeOutcome> = o.key === undefined ? ledger.invoke(token, 'work', args) : ledger.invoke(token, 'work', args, { idempotencyKey: `key-${o.key}` });
            await flush();
            const decision = ledger.events().slice(before).find((e) => e.type === 'call.admitted' || e.type === 'call.rejected' || e.type === 'call.replayed') as LedgerEvent;
            if (expected.kind === 'admitted') {
              expect(decision).toMatchObject({ type: 'call.admitted' });
              model.admit(o.key, argsKey, (decision as EventOf<'call.admitted'>).callId, decision.at);
            } else if (expected.kind === 'replay') expect(decision).toMatchObject({ type: 'call.replayed', replayOf: expected.of });
            else expect(decision).toMatchObject({ type: 'call.rejected', reason: expected.reason });
            pending.push(call.then((outcome) => ({ outcome, expected })));
          }
          await flush();
        }
        // Let every deadline pass and every timer fire; release what still hangs.
        clock.advance(timeoutMs);
        await ledger.runDueTimeouts();
        hanging.splice(0).forEach((release) => release('late'));
        for (const { outcome, expected } of await Promise.all(pending)) {
          if (expected.kind === 'replay') {
            expect(outcome.callId).toBe(expected.of);
            expect(outcome).toMatchObject({ replayed: true });
          }
        }
        await ledger.close();
        const events = ledger.events();
        // A retry never reserves: the grant's use is exactly its admissions (nothing is refunded here).
        const admitted = events.filter((e): e is EventOf<'call.admitted'> => e.type === 'call.admitted');
        expect(ledger.usage(grantId).calls.used).toBe(admitted.length);
        expect(admitted.length).toBe(model.admitted);
        // Every admitted call is settled exactly once; a timeout never before its deadline.
        for (const a of admitted) {
          const settlements = events.filter((e) => (e.type === 'call.completed' || e.type === 'call.failed') && e.callId === a.callId);
          expect(settlements).toHaveLength(1);
          const s = settlements[0] as LedgerEvent;
          if (s.type === 'call.failed' && s.timedOut === true) expect(s.at).toBeGreaterThanOrEqual(a.deadline as number);
        }
        expect(ledger.inFlight()).toEqual([]);
        expect(verify(events)).toMatchObject({ ok: true, problems: [] });
        expect(replay(events)).toEqual(ledger.state());
      }),
      { numRuns: 60 },
    );
  });
});
