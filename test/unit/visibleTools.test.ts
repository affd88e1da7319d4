import { visibleTools } from '../../src/domain/visibleTools';
import { grantRecord } from '../support/grantRecord';
import { stateOf } from '../support/stateOf';

// What a token may call now (visibleTools.ts), on states built here.
const schema = { type: 'object' };

describe('visibleTools', () => {
  it('lists the grant’s registered tools in the grant’s order, with their input schemas', () => {
    const grant = grantRecord({ scope: { tools: ['b', 'a'] } });
    const tools = visibleTools(stateOf([grant], { a: { type: 'object', title: 'a' }, b: schema }), 'g', 5);
    expect(tools).toEqual([
      { name: 'b', inputSchema: schema, narrowing: [] },
      { name: 'a', inputSchema: { type: 'object', title: 'a' }, narrowing: [] },
    ]);
    expect(Object.isFrozen(tools)).toBe(true);
    expect(Object.isFrozen(tools[0])).toBe(true);
    expect(Object.isFrozen(tools[0]?.narrowing)).toBe(true);
  });

  it('leaves out a tool that is not registered, and an inherited name', () => {
    const grant = grantRecord({ scope: { tools: ['a', 'gone', 'constructor'] } });
    expect(visibleTools(stateOf([grant], { a: schema }), 'g', 5).map((t) => t.name)).toEqual(['a']);
  });

  it('is empty for an unknown grant and for a grant outside its window', () => {
    const state = stateOf([grantRecord({ scope: { tools: ['a'], notBefore: 10, expiresAt: 20 } })], { a: schema });
    expect(visibleTools(state, undefined, 15)).toEqual([]);
    expect(visibleTools(state, 'other', 15)).toEqual([]);
    expect(visibleTools(state, 'g', 9)).toEqual([]);
    expect(visibleTools(state, 'g', 20)).toEqual([]);
    expect(visibleTools(state, 'g', 15)).toHaveLength(1);
  });

  it('is empty when an ancestor is revoked', () => {
    const root = grantRecord({ grantId: 'root', revoked: true, scope: { tools: ['a'] } });
    const child = grantRecord({ grantId: 'child', parentGrantId: 'root', ancestors: ['root'], scope: { tools: ['a'] } });
    expect(visibleTools(stateOf([root, child], { a: schema }), 'child', 5)).toEqual([]);
  });

  it('lists every narrowing schema of the chain for a tool, root’s first, skipping links without one', () => {
    const n1 = { properties: { x: { maxLength: 3 } } };
    const n3 = { properties: { x: { maxLength: 1 } } };
    const root = grantRecord({ grantId: 'root', scope: { tools: ['a', 'b'], args: { a: n1 } } });
    const mid = grantRecord({ grantId: 'mid', parentGrantId: 'root', ancestors: ['root'], scope: { tools: ['a', 'b'], args: { b: n1 } } });
    const leaf = grantRecord({ grantId: 'leaf', parentGrantId: 'mid', ancestors: ['root', 'mid'], scope: { tools: ['a'], args: { a: n3 } } });
    const tools = visibleTools(stateOf([root, mid, leaf], { a: schema, b: schema }), 'leaf', 5);
    expect(tools).toEqual([{ name: 'a', inputSchema: schema, narrowing: [n1, n3] }]);
  });

  it('ignores an inherited name in a link’s args', () => {
    const grant = grantRecord({ scope: { tools: ['constructor', 'a'], args: {} } });
    const tools = visibleTools(stateOf([grant], { a: schema, constructor: schema }), 'g', 5);
    expect(tools.map((t) => t.narrowing)).toEqual([[], []]);
  });
});
