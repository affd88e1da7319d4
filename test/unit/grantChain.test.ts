import { ancestorRecords, chainAuthority, isDescendant } from '../../src/domain/grantChain';
import { grantRecord } from '../support/grantRecord';
import { stateOf } from '../support/stateOf';

// A grant's authority over its chain (grantChain.ts), one rule per test, states built here.
const root = (over: Parameters<typeof grantRecord>[0] = {}) => grantRecord({ grantId: 'root', ...over });
const child = (over: Parameters<typeof grantRecord>[0] = {}) => grantRecord({ grantId: 'child', parentGrantId: 'root', ancestors: ['root'], ...over });
const window = (notBefore: number, expiresAt: number) => ({ scope: { notBefore, expiresAt } });

describe('chainAuthority', () => {
  it('is unknown_token for no grant id and for an id the state does not hold', () => {
    const state = stateOf([root()]);
    expect(chainAuthority(state, undefined, 5)).toEqual({ ok: false, reason: 'unknown_token' });
    expect(chainAuthority(state, 'nope', 5)).toEqual({ ok: false, reason: 'unknown_token' });
  });

  it('admits a live root with no ancestors', () => {
    const state = stateOf([root()]);
    const authority = chainAuthority(state, 'root', 5);
    expect(authority).toEqual({ ok: true, grant: root(), ancestors: [] });
  });

  it('admits a child with its ancestors, root first', () => {
    const mid = grantRecord({ grantId: 'mid', parentGrantId: 'root', ancestors: ['root'] });
    const leaf = grantRecord({ grantId: 'leaf', parentGrantId: 'mid', ancestors: ['root', 'mid'] });
    const authority = chainAuthority(stateOf([root(), mid, leaf]), 'leaf', 5);
    expect(authority.ok && authority.ancestors.map((a) => a.grantId)).toEqual(['root', 'mid']);
  });

  it('is valid from notBefore (inclusive) until expiresAt (exclusive)', () => {
    const state = stateOf([root(window(10, 20))]);
    expect(chainAuthority(state, 'root', 9)).toMatchObject({ ok: false, reason: 'not_yet_valid' });
    expect(chainAuthority(state, 'root', 10)).toMatchObject({ ok: true });
    expect(chainAuthority(state, 'root', 19)).toMatchObject({ ok: true });
    expect(chainAuthority(state, 'root', 20)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('is revoked for a revoked grant, and names the grant', () => {
    const authority = chainAuthority(stateOf([root({ revoked: true })]), 'root', 5);
    expect(authority).toEqual({ ok: false, reason: 'revoked', grant: root({ revoked: true }) });
  });

  it('is revoked when an ancestor is revoked, though the child is not', () => {
    expect(chainAuthority(stateOf([root({ revoked: true }), child()]), 'child', 5)).toMatchObject({ ok: false, reason: 'revoked' });
  });

  it('fails closed (revoked) when an ancestor record is missing', () => {
    expect(chainAuthority(stateOf([child()]), 'child', 5)).toMatchObject({ ok: false, reason: 'revoked', grant: child() });
  });

  it('applies an ancestor’s validity window to the child', () => {
    const state = stateOf([root(window(10, 20)), child(window(0, 100))]);
    expect(chainAuthority(state, 'child', 5)).toMatchObject({ ok: false, reason: 'not_yet_valid' });
    expect(chainAuthority(state, 'child', 20)).toMatchObject({ ok: false, reason: 'expired' });
    expect(chainAuthority(state, 'child', 15)).toMatchObject({ ok: true });
  });

  it('lets a child act from its ancestor’s notBefore on (inclusive), as the grant’s own', () => {
    const state = stateOf([root(window(10, 20)), child(window(0, 100))]);
    expect(chainAuthority(state, 'child', 10)).toMatchObject({ ok: true });
    expect(chainAuthority(state, 'child', 9)).toMatchObject({ ok: false, reason: 'not_yet_valid' });
  });

  it('ranks revoked over not_yet_valid over expired across the chain', () => {
    expect(chainAuthority(stateOf([root({ revoked: true }), child(window(0, 1))]), 'child', 5)).toMatchObject({ reason: 'revoked' });
    expect(chainAuthority(stateOf([root(window(0, 1)), child({ revoked: true })]), 'child', 5)).toMatchObject({ reason: 'revoked' });
    expect(chainAuthority(stateOf([root(window(10, 20)), child(window(0, 1))]), 'child', 5)).toMatchObject({ reason: 'not_yet_valid' });
    expect(chainAuthority(stateOf([root(window(0, 1)), child(window(10, 20))]), 'child', 5)).toMatchObject({ reason: 'not_yet_valid' });
  });

  it('treats an empty ancestor list as a root', () => {
    expect(chainAuthority(stateOf([root({ ancestors: [] })]), 'root', 5)).toMatchObject({ ok: true, ancestors: [] });
  });
});

describe('ancestorRecords', () => {
  it('is empty for a root and for an empty ancestor list', () => {
    const state = stateOf([root()]);
    expect(ancestorRecords(state, root())).toEqual([]);
    expect(ancestorRecords(state, root({ ancestors: [] }))).toEqual([]);
  });

  it('is the ancestors’ records, root first', () => {
    const mid = grantRecord({ grantId: 'mid', parentGrantId: 'root', ancestors: ['root'] });
    const leaf = grantRecord({ grantId: 'leaf', parentGrantId: 'mid', ancestors: ['root', 'mid'] });
    expect(ancestorRecords(stateOf([root(), mid, leaf]), leaf)?.map((g) => g.grantId)).toEqual(['root', 'mid']);
  });

  it('is undefined when an ancestor record is missing', () => {
    expect(ancestorRecords(stateOf([]), child())).toBeUndefined();
  });
});

describe('isDescendant', () => {
  it('is true only for a grant strictly below the id', () => {
    expect(isDescendant(child(), 'root')).toBe(true);
    expect(isDescendant(child(), 'child')).toBe(false);
    expect(isDescendant(root(), 'root')).toBe(false);
  });
});
