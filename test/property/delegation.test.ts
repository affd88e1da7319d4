import fc from 'fast-check';
import { createLedger, replay, verify, type Ledger, type LedgerEvent } from '../../src';
import { manualClock } from '../support/fixtures';

// Random delegation trees (depth ≤ 5, fan-out ≤ 8) under random calls, refunds, revocations and
// time, interleaved by fast-check's scheduler, checked against a small reference model of the rules
// (written independently of the decider) event by event, plus replay and verify.

interface ModelGrant {
  readonly id: string;
  /** Ancestors' ids, root first. */
  readonly chain: readonly string[];
  readonly calls: number;
  readonly bytes: number;
  readonly notBefore: number;
  readonly expiresAt: number;
  usedCalls: number;
  usedBytes: number;
  revoked: boolean;
}

/** The rules of docs/delegation.md, stated plainly; `apply` throws when a logged event breaks one. */
class ReferenceModel {
  readonly grants = new Map<string, ModelGrant>();
  private readonly reserved = new Map<string, { grantId: string; calls: number; bytes: number }>();

  constructor(private readonly refundOnError: boolean) {}

  private links(id: string): ModelGrant[] {
    const grant = this.get(id);
    return [...grant.chain.map((a) => this.get(a)), grant];
  }

  private get(id: string): ModelGrant {
    const grant = this.grants.get(id);
    if (grant === undefined) throw new Error(`unknown grant ${id}`);
    return grant;
  }

  authority(id: string, at: number): 'revoked' | 'not_yet_valid' | 'expired' | undefined {
    const links = this.links(id);
    if (links.some((g) => g.revoked)) return 'revoked';
    if (links.some((g) => at < g.notBefore)) return 'not_yet_valid';
    if (links.some((g) => at >= g.expiresAt)) return 'expired';
    return undefined;
  }

  /** What a call of `bytes` on `id` at `at` must be decided as (arguments always pass in this test). */
  callReason(id: string, bytes: number, at: number): string | undefined {
    const authority = this.authority(id, at);
    if (authority !== undefined) return authority;
    const links = this.links(id);
    if (links.some((g) => g.usedCalls + 1 > g.calls)) return 'call_budget_exhausted';
    if (links.some((g) => g.usedBytes + bytes > g.bytes)) return 'byte_budget_exhausted';
    return undefined;
  }

  /** min(limit − used) over the grant and its ancestors. */
  left(id: string): { calls: number; bytes: number } {
    const links = this.links(id);
    return { calls: Math.min(...links.map((g) => g.calls - g.usedCalls)), bytes: Math.min(...links.map((g) => g.bytes - g.usedBytes)) };
  }

  private charge(id: string, calls: number, bytes: number): void {
    for (const g of this.links(id)) {
      g.usedCalls += calls;
      g.usedBytes += bytes;
    }
  }

  apply(e: LedgerEvent): void {
    const fail = (what: string): never => {
      throw new Error(`seq ${e.seq} (${e.type}): ${what}`);
    };
    switch (e.type) {
      case 'grant.issued': {
        const base = { id: e.grantId, calls: e.scope.budget.calls, bytes: e.scope.budget.inputBytes, notBefore: e.scope.notBefore, expiresAt: e.scope.expiresAt, usedCalls: 0, usedBytes: 0, revoked: false };
        if (e.parentGrantId === undefined) {
          this.grants.set(e.grantId, { ...base, chain: [] });
          break;
        }
        const parent = this.get(e.parentGrantId);
        if (this.authority(parent.id, e.at) !== undefined) fail('a child issued from a parent that could not act');
        const left = this.left(parent.id);
        if (e.parentLeft?.calls !== left.calls || e.parentLeft.inputBytes !== left.bytes) fail('parentLeft is not what the chain had left');
        if (base.calls > left.calls || base.bytes > left.bytes) fail('a child budget above what its parent had left');
        if (base.notBefore < parent.notBefore || base.expiresAt > parent.expiresAt) fail('a child window outside its parent');
        if (parent.chain.length + 1 > 5) fail('a tree deeper than this test builds');
        this.grants.set(e.grantId, { ...base, chain: [...parent.chain, parent.id] });
        break;
      }
      case 'grant.revoked': {
        const target = this.get(e.grantId);
        if (e.revokedBy !== undefined) {
          if (!target.chain.includes(e.revokedBy)) fail('revoked by a grant that is not an ancestor');
          if (this.authority(e.revokedBy, e.at) !== undefined) fail('revoked by a grant that could not act');
        }
        target.revoked = true;
        break;
      }
      case 'call.admitted': {
        const expected = this.callReason(e.grantId, e.reserved.inputBytes, e.at);
        if (expected !== undefined) fail(`admitted, the model says ${expected}`);
        if (JSON.stringify(e.ancestors ?? []) !== JSON.stringify(this.get(e.grantId).chain)) fail('ancestors are not the chain');
        this.charge(e.grantId, 1, e.reserved.inputBytes);
        this.reserved.set(e.callId, { grantId: e.grantId, calls: 1, bytes: e.reserved.inputBytes });
        break;
      }
      case 'call.rejected': {
        if (e.grantId === undefined) fail('a call of an unknown token (this test sends none)');
        const expected = this.callReason(e.grantId as string, e.inputBytes ?? 0, e.at);
        if (expected !== e.reason) fail(`rejected ${e.reason}, the model says ${expected ?? 'admit'}`);
        break;
      }
      case 'call.completed':
        if (!this.reserved.delete(e.callId)) fail('completed a call not in flight');
        break;
      case 'call.failed': {
        const call = this.reserved.get(e.callId);
        if (call === undefined) fail('failed a call not in flight');
        const refund = this.refundOnError ? { calls: 1, inputBytes: (call as { bytes: number }).bytes } : { calls: 0, inputBytes: 0 };
        if (e.refunded.calls !== refund.calls || e.refunded.inputBytes !== refund.inputBytes) fail('refunded other than onToolError says');
        this.charge(e.grantId, -refund.calls, -refund.inputBytes);
        this.reserved.delete(e.callId);
        break;
      }
      case 'attenuation.rejected':
        if (e.parentGrantId === undefined) fail('an unknown token (this test sends none)');
        if (e.reason !== 'attenuation_widens' && e.reason !== 'attenuation_invalid' && e.reason !== this.authority(e.parentGrantId as string, e.at)) fail(`refused ${e.reason}, the model disagrees`);
        if ((e.reason === 'attenuation_widens' || e.reason === 'attenuation_invalid') && this.authority(e.parentGrantId as string, e.at) !== undefined) fail('refused for the request although the parent could not act');
        break;
      case 'revocation.rejected':
        if (e.revokedBy === undefined) fail('an unknown token (this test sends none)');
        if (e.reason === 'not_a_descendant') {
          if (this.authority(e.revokedBy as string, e.at) !== undefined) fail('not_a_descendant although the revoker could not act');
          if (e.grantId !== undefined && this.get(e.grantId).chain.includes(e.revokedBy as string)) fail('not_a_descendant for a descendant');
        } else if (e.reason !== this.authority(e.revokedBy as string, e.at)) fail(`refused ${e.reason}, the model disagrees`);
        break;
      case 'tool.registered':
        break;
    }
    // No grant in any tree ever goes over its budget.
    for (const g of this.grants.values()) if (g.usedCalls > g.calls || g.usedBytes > g.bytes) fail(`grant ${g.id} over budget`);
  }
}

type TreeStep = { parent: number; calls: number | undefined; shorten: number };
type Op =
  | { kind: 'invoke'; node: number; text: string }
  | { kind: 'revoke'; node: number; abort: boolean }
  | { kind: 'revokeDelegation'; by: number; target: number; abort: boolean }
  | { kind: 'attenuate'; node: number; calls: number | undefined }
  | { kind: 'advance'; ms: number };

const treeArb = fc.array(fc.record({ parent: fc.nat(), calls: fc.option(fc.nat(8), { nil: undefined }), shorten: fc.nat(600) }), { maxLength: 30 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('invoke' as const), node: fc.nat(), text: fc.constantFrom('a', 'bb', '!fail', 'cccccc', '!x') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), node: fc.nat(), abort: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('revokeDelegation' as const), by: fc.nat(), target: fc.nat(), abort: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('attenuate' as const), node: fc.nat(), calls: fc.option(fc.nat(4), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 500 }) }) },
);

interface Node { grantId: string; token: string; depth: number; children: number; expiresAt: number }

async function buildTree(ledger: Ledger, model: ReferenceModel, steps: readonly TreeStep[], rootBudget: number): Promise<Node[]> {
  const root = await ledger.issue({ tools: ['work'], expiresAt: 2_000, budget: { calls: rootBudget, inputBytes: 400 } });
  model.apply(ledger.events()[ledger.events().length - 1] as LedgerEvent);
  const nodes: Node[] = [{ ...root, depth: 0, children: 0, expiresAt: 2_000 }];
  for (const step of steps) {
    const parent = nodes[step.parent % nodes.length] as Node;
    if (parent.depth >= 5 || parent.children >= 8) continue;
    const expiresAt = parent.expiresAt - step.shorten;
    const request = { ...(step.calls === undefined ? {} : { budget: { calls: step.calls } }), expiresAt };
    // Call by call: the model says, before the ledger decides, whether this child is issued.
    const left = model.left(parent.grantId);
    const expectIssued = (step.calls === undefined || step.calls <= left.calls) && expiresAt > 0;
    const outcome = await ledger.attenuate(parent.token, request);
    expect(outcome.status).toBe(expectIssued ? 'issued' : 'rejected');
    model.apply(ledger.events()[ledger.events().length - 1] as LedgerEvent);
    if (outcome.status === 'issued') {
      parent.children++;
      nodes.push({ grantId: outcome.grantId, token: outcome.token, depth: parent.depth + 1, children: 0, expiresAt });
    }
  }
  return nodes;
}

describe('delegation trees under any interleaving, against a reference model', () => {
  it('no grant over budget, nothing admitted below a revoked or expired ancestor, model agrees on every event, replay equals state, verify passes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        treeArb,
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        fc.constantFrom('consume' as const, 'refund' as const),
        fc.integer({ min: 1, max: 12 }),
        async (s, tree, ops, onToolError, rootBudget) => {
          const clock = manualClock(0);
          const ledger = createLedger({ clock: clock.now, onToolError });
          await ledger.registerTool<{ text: string }>({
            name: 'work',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            run: (a) => s.schedule(Promise.resolve(a.text)).then((t) => (t.startsWith('!') ? Promise.reject(new Error('tool failed')) : t)),
          });
          const model = new ReferenceModel(onToolError === 'refund');
          model.apply(ledger.events()[0] as LedgerEvent);
          const nodes = await buildTree(ledger, model, tree, rootBudget);
          const pending: Promise<unknown>[] = [];
          for (const op of ops) {
            pending.push(
              s.schedule(Promise.resolve(op), JSON.stringify(op)).then(async () => {
                const node = (i: number): Node => nodes[i % nodes.length] as Node;
                switch (op.kind) {
                  case 'invoke':
                    return ledger.invoke(node(op.node).token, 'work', { text: op.text });
                  case 'revoke':
                    return ledger.revoke(node(op.node).grantId, { abortInFlight: op.abort });
                  case 'revokeDelegation':
                    return ledger.revokeDelegation(node(op.by).token, node(op.target).grantId, { abortInFlight: op.abort });
                  case 'attenuate': {
                    const parent = node(op.node);
                    if (parent.depth >= 5 || parent.children >= 8) return undefined; // the trees stay within depth 5, fan-out 8
                    parent.children++;
                    const outcome = await ledger.attenuate(parent.token, op.calls === undefined ? {} : { budget: { calls: op.calls } });
                    if (outcome.status === 'issued') nodes.push({ grantId: outcome.grantId, token: outcome.token, depth: parent.depth + 1, children: 0, expiresAt: parent.expiresAt });
                    return outcome;
                  }
                  case 'advance':
                    return clock.advance(op.ms);
                }
              }),
            );
          }
          let settled = false;
          const all = Promise.all(pending).then(() => (settled = true));
          while (!settled) {
            await s.waitAll();
            await new Promise((resolve) => setImmediate(resolve));
          }
          await all;
          await ledger.close();
          const events = ledger.events();
          // The tree phase was checked as it was built; now the whole log, event by event.
          const full = new ReferenceModel(onToolError === 'refund');
          for (const event of events) full.apply(event);
          for (const node of nodes) {
            const g = full.grants.get(node.grantId) as ModelGrant;
            expect(ledger.usage(node.grantId)).toEqual({ calls: { limit: g.calls, used: g.usedCalls }, inputBytes: { limit: g.bytes, used: g.usedBytes } });
          }
          expect(replay(events)).toEqual(ledger.state());
          expect(verify(events).problems).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
