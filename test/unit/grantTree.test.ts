import { grantTree, grantTreeLines, type GrantTreeNode } from '../../src/domain/grantTree';
import { noAdmissionTimes, withAdmissionTime } from '../../src/domain/rateWindow';
import { grantRecord } from '../support/grantRecord';
import { stateOf } from '../support/stateOf';

// The audit read model of the delegation forest (grantTree.ts), on states built here.
const childOf = (id: string, ancestors: string[], over: Parameters<typeof grantRecord>[0] = {}) =>
  grantRecord({ grantId: id, parentGrantId: ancestors[ancestors.length - 1] as string, ancestors, ...over });

function shape(nodes: readonly GrantTreeNode[]): unknown[] {
  return nodes.map((n) => [n.grantId, n.depth, n.status, shape(n.children)]);
}

describe('grantTree', () => {
  it('nests children under their parents, roots and siblings in issued order', () => {
    const state = stateOf([grantRecord({ grantId: 'r1' }), grantRecord({ grantId: 'r2' }), childOf('c1', ['r1']), childOf('c2', ['r1']), childOf('g1', ['r1', 'c2'])]);
    expect(shape(grantTree(state, ['r2', 'r1', 'c2', 'c1', 'g1'], 5))).toEqual([
      ['r2', 0, 'active', []],
      ['r1', 0, 'active', [['c2', 1, 'active', [['g1', 2, 'active', []]]], ['c1', 1, 'active', []]]],
    ]);
  });

  it('skips ids the state does not hold', () => {
    expect(shape(grantTree(stateOf([grantRecord({ grantId: 'r' })]), ['x', 'r'], 5))).toEqual([['r', 0, 'active', []]]);
  });

  it('gives a parent id only to children', () => {
    const [r] = grantTree(stateOf([grantRecord({ grantId: 'r' }), childOf('c', ['r'])]), ['r', 'c'], 5);
    expect(r && 'parentGrantId' in r).toBe(false);
    expect(r?.children[0]?.parentGrantId).toBe('r');
  });

  it('shows a child of a revoked root as revoked, and expired and not-yet-valid grants as such', () => {
    const state = stateOf([
      grantRecord({ grantId: 'r', revoked: true }),
      childOf('c', ['r']),
      grantRecord({ grantId: 'late', scope: { notBefore: 0, expiresAt: 5 } }),
      grantRecord({ grantId: 'early', scope: { notBefore: 6, expiresAt: 50 } }),
    ]);
    expect(shape(grantTree(state, ['r', 'c', 'late', 'early'], 5))).toEqual([
      ['r', 0, 'revoked', [['c', 1, 'revoked', []]]],
      ['late', 0, 'expired', []],
      ['early', 0, 'not_yet_valid', []],
    ]);
  });

  it('reports calls and input bytes used against their limits, and the tools and expiry', () => {
    const [node] = grantTree(stateOf([grantRecord({ grantId: 'r', used: { calls: 2, inputBytes: 30 }, budget: { calls: 5, inputBytes: 100 }, scope: { tools: ['a', 'b'], expiresAt: 77 } })]), ['r'], 5);
    expect(node).toEqual({ grantId: 'r', depth: 0, status: 'active', tools: ['a', 'b'], expiresAt: 77, usage: { calls: { limit: 5, used: 2 }, inputBytes: { limit: 100, used: 30 } }, children: [] });
  });

  it('reports each capped meter with its use (0 when unused), only on a grant that caps meters', () => {
    const [node] = grantTree(stateOf([grantRecord({ grantId: 'r', budget: { meters: { usd: 10, tokens: 5 } }, metersUsed: { usd: 4 } })]), ['r'], 5);
    expect(node?.usage.meters).toEqual({ usd: { limit: 10, used: 4 }, tokens: { limit: 5, used: 0 } });
    const [plain] = grantTree(stateOf([grantRecord({ grantId: 'r' })]), ['r'], 5);
    expect(plain && 'meters' in plain.usage).toBe(false);
    expect(plain && 'rate' in plain.usage).toBe(false);
  });

  it('reports a rate window’s admissions inside the window ending at the tree’s time', () => {
    let admissions = noAdmissionTimes;
    for (const at of [10, 50, 95]) admissions = withAdmissionTime(admissions, 5, at);
    const [node] = grantTree(stateOf([grantRecord({ grantId: 'r', budget: { rate: { calls: 5, windowMs: 50 } }, admissions })]), ['r'], 100);
    expect(node?.usage.rate).toEqual({ limit: 5, windowMs: 50, inWindow: 1 });
  });
});

describe('grantTreeLines', () => {
  it('draws one line per grant with branches, usage and tools', () => {
    const state = stateOf([
      grantRecord({ grantId: 'r', used: { calls: 1, inputBytes: 2 }, scope: { tools: ['a', 'b'] } }),
      childOf('c1', ['r'], { budget: { meters: { usd: 9 } }, metersUsed: { usd: 3 } }),
      childOf('g', ['r', 'c1']),
      childOf('c2', ['r'], { budget: { rate: { calls: 4, windowMs: 1_000 } } }),
    ]);
    expect(grantTreeLines(grantTree(state, ['r', 'c1', 'g', 'c2'], 5))).toEqual([
      'r  active  calls 1/10  bytes 2/1000  tools a,b',
      '├─ c1  active  calls 0/10  bytes 0/1000  usd 3/9  tools notes',
      '│  └─ g  active  calls 0/10  bytes 0/1000  tools notes',
      '└─ c2  active  calls 0/10  bytes 0/1000  rate 0/4 per 1000 ms  tools notes',
    ]);
  });

  it('lists a grant’s meters side by side, two spaces apart', () => {
    const state = stateOf([grantRecord({ grantId: 'r', budget: { meters: { tokens: 5, usd: 9 } }, metersUsed: { tokens: 1, usd: 3 } })]);
    expect(grantTreeLines(grantTree(state, ['r'], 5))).toEqual(['r  active  calls 0/10  bytes 0/1000  tokens 1/5  usd 3/9  tools notes']);
  });

  it('indents below a last child with spaces', () => {
    const state = stateOf([grantRecord({ grantId: 'r' }), childOf('c', ['r']), childOf('g', ['r', 'c'])]);
    const lines = grantTreeLines(grantTree(state, ['r', 'c', 'g'], 5));
    expect(lines[2]?.startsWith('   └─ g  ')).toBe(true);
  });

  it('draws nothing for an empty forest', () => {
    expect(grantTreeLines([])).toEqual([]);
  });
});
