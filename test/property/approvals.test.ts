import fc from 'fast-check';
import { replay, verify, type InvokeOutcome } from '../../src';
import { hour, over100, paymentsLedger, settle } from '../support/approvals';
import { closeLedgers } from '../support/approvals';

afterEach(closeLedgers);

// Random interleavings of calls that wait for a person with approvals, denials, forged ids,
// timeouts (an injected clock), budgets and revocations, on a root and a child, driven through the
// public API against a small reference model; after every step the pending approvals and the usage
// must agree with it, and at the end every invoke's outcome, verify and replay.

type Who = 'root' | 'child';
type Op =
  | { readonly kind: 'invoke'; readonly who: Who; readonly amount: number }
  | { readonly kind: 'approve' | 'deny'; readonly pick: number }
  | { readonly kind: 'forged' }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'revoke'; readonly who: Who };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('invoke' as const), who: fc.constantFrom<Who>('root', 'child'), amount: fc.constantFrom(10, 60, 101, 500) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('approve' as const, 'deny' as const), pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'forged' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 400, 1_000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), who: fc.constantFrom<Who>('root', 'child') }) },
);

interface ModelGrant { limit: number; used: number; revoked: boolean }
interface ModelWait { readonly call: number; readonly who: Who; readonly deadline: number; approvalId: string }

/** The reference model: which calls wait, what each grant has used, how each call must end. */
class Model {
  readonly grants: Record<Who, ModelGrant>;
  pending: ModelWait[] = [];
  /** Every approval id that has ended (a second use is refused). */
  readonly ended = new Set<string>();
  readonly expected = new Map<number, string>();

  constructor(rootCalls: number, childCalls: number, private now: number) {
    this.grants = { root: { limit: rootCalls, used: 0, revoked: false }, child: { limit: childCalls, used: 0, revoked: false } };
  }

  private chain(who: Who): ModelGrant[] {
    return who === 'root' ? [this.grants.root] : [this.grants.child, this.grants.root];
  }

  /** Root: payments over 100 wait; the child adds 50 and over. Every check before approval decides first. */
  invoke(call: number, who: Who, amount: number): 'waits' | 'done' {
    const chain = this.chain(who);
    if (chain.some((g) => g.revoked)) return this.end(call, 'revoked');
    if (chain.some((g) => g.used + 1 > g.limit)) return this.end(call, 'call_budget_exhausted');
    for (const g of chain) g.used++;
    if (amount > 100 || (who === 'child' && amount >= 50)) {
      this.pending.push({ call, who, deadline: this.now + 1_000, approvalId: '' });
      return 'waits';
    }
    return this.end(call, 'completed');
  }

  private end(call: number, outcome: string): 'done' {
    this.expected.set(call, outcome);
    return 'done';
  }

  private finish(wait: ModelWait, outcome: string, release: boolean): void {
    this.pending = this.pending.filter((w) => w !== wait);
    this.ended.add(wait.approvalId);
    if (release) for (const g of this.chain(wait.who)) g.used--;
    this.expected.set(wait.call, outcome);
  }

  decide(wait: ModelWait, approve: boolean): void {
    this.finish(wait, approve ? 'completed' : 'approval_denied', !approve);
  }

  advance(ms: number): void {
    this.now += ms;
    for (const wait of this.pending.slice()) if (wait.deadline <= this.now) this.finish(wait, 'approval_timeout', true);
  }

  revoke(who: Who): void {
    this.grants[who].revoked = true;
    if (who === 'root') this.grants.child.revoked = true;
    for (const wait of this.pending.slice()) if (this.chain(wait.who).some((g) => g.revoked)) this.finish(wait, 'revoked', true);
  }
}

function outcomeName(outcome: InvokeOutcome<unknown>): string {
  return outcome.status === 'rejected' ? outcome.reason : outcome.status;
}

async function runOps(rootCalls: number, childAsked: number, ops: readonly Op[]): Promise<void> {
  const childCalls = Math.min(childAsked, rootCalls); // a child's budget is at most its parent's
  const { ledger, clock } = await paymentsLedger();
  const root = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: rootCalls, inputBytes: 100_000 }, approvals: { pay: over100 }, approvalTimeoutMs: 1_000 });
  const childIssued = await ledger.attenuate(root.token, { budget: { calls: childCalls }, approvals: { pay: { properties: { amount: { minimum: 50 } } } } });
  if (childIssued.status !== 'issued') throw new Error('attenuate refused');
  const tokens = { root: root.token, child: childIssued.token };
  const grantIds = { root: root.grantId, child: childIssued.grantId };
  const model = new Model(rootCalls, childCalls, clock.now());
  const outcomes: Promise<InvokeOutcome<unknown>>[] = [];
  for (const op of ops) {
    if (op.kind === 'invoke') {
      const call = outcomes.length;
      outcomes.push(ledger.invoke(tokens[op.who], 'pay', { to: 'bob', amount: op.amount }));
      await settle();
      if (model.invoke(call, op.who, op.amount) === 'waits') {
        const listed = ledger.pendingApprovals();
        (model.pending.at(-1) as ModelWait).approvalId = listed.at(-1)?.approvalId ?? '(none listed)';
      }
    } else if (op.kind === 'approve' || op.kind === 'deny') {
      const known = [...model.pending.map((w) => w.approvalId), ...model.ended];
      if (known.length === 0) continue;
      const id = known[op.pick % known.length] as string;
      const wait = model.pending.find((w) => w.approvalId === id);
      const result = op.kind === 'approve' ? await ledger.approve(id, { by: 'alice' }) : await ledger.deny(id, { by: 'alice' });
      if (wait === undefined) expect(result).toEqual({ status: 'refused', reason: 'approval_resolved' });
      else {
        expect(result.status).toBe(op.kind === 'approve' ? 'approved' : 'denied');
        model.decide(wait, op.kind === 'approve');
      }
    } else if (op.kind === 'forged') {
      await expect(ledger.approve('a_00000000000000000000000000000000', { by: 'mallory' })).resolves.toEqual({ status: 'refused', reason: 'unknown_approval' });
    } else if (op.kind === 'advance') {
      clock.advance(op.ms);
      await ledger.runDueTimeouts();
      model.advance(op.ms);
    } else if (op.kind === 'revoke') {
      await ledger.revoke(grantIds[op.who]);
      model.revoke(op.who);
    }
    await settle();
    expect(ledger.pendingApprovals().map((p) => p.approvalId)).toEqual(model.pending.map((w) => w.approvalId));
    expect(ledger.usage(grantIds.root).calls.used).toBe(model.grants.root.used);
    expect(ledger.usage(grantIds.child).calls.used).toBe(model.grants.child.used);
  }
  // What still waits ends when its deadline passes.
  clock.advance(1_000);
  await ledger.runDueTimeouts();
  model.advance(1_000);
  const actual = (await Promise.all(outcomes)).map(outcomeName);
  expect(actual).toEqual(outcomes.map((_, i) => model.expected.get(i)));
  const events = ledger.events();
  expect(verify(events)).toMatchObject({ ok: true });
  expect(replay(events)).toEqual(ledger.state());
  await ledger.close();
}

describe('approvals against a reference model', () => {
  it('random interleavings of waits, decisions, timeouts, budgets and revocations agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), fc.array(opArb, { maxLength: 30 }), (rootCalls, childCalls, ops) => runOps(rootCalls, childCalls, ops)),
      { numRuns: 60 },
    );
  }, 120_000);
});
