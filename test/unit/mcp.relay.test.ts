import { CallRouter, type CallLink, type RelaySession } from '../../src/integrations/mcp/relay/callRouter';
import { withoutAtcMeta } from '../../src/integrations/mcp/relay/sanitize';
import { dropAtcMeta } from '../../src/integrations/mcp/upstreamMeta';

const session = (id: string): RelaySession => ({ id, clientCapabilities: () => ({}) });
const link = (s: RelaySession): CallLink => ({ session: s, sendRequest: () => Promise.reject(new Error('unused')), sendNotification: () => Promise.resolve() });

describe('CallRouter', () => {
  it('ties an upstream request to no call while none is in flight', () => {
    const router = new CallRouter();
    expect(router.route()).toEqual({ refused: 'no_call' });
    const leave = router.enter(link(session('a')));
    leave();
    expect(router.route()).toEqual({ refused: 'no_call' });
  });

  it("routes to the one session's oldest call still running", () => {
    const router = new CallRouter();
    const a = session('a');
    const first = link(a);
    const second = link(a);
    const leaveFirst = router.enter(first);
    router.enter(second);
    expect(router.route()).toEqual({ link: first });
    leaveFirst();
    expect(router.route()).toEqual({ link: second });
  });

  it('refuses as ambiguous while calls of two sessions are in flight, and routes again once one ends', () => {
    const router = new CallRouter();
    const onA = link(session('a'));
    const leaveB = router.enter(link(session('b')));
    router.enter(onA);
    expect(router.route()).toEqual({ refused: 'ambiguous' });
    leaveB();
    expect(router.route()).toEqual({ link: onA });
  });
});

describe('dropAtcMeta', () => {
  it('drops the keys under atc/ and keeps the others', () => {
    expect(dropAtcMeta({ 'atc/reason': 'revoked', 'atc/callId': 'c_x', 'vendor/k': 1, atc: 2 })).toEqual({ 'vendor/k': 1, atc: 2 });
  });

  it('answers undefined for nothing left, or for anything but a plain object', () => {
    expect(dropAtcMeta({ 'atc/reason': 'revoked' })).toBeUndefined();
    for (const value of [undefined, null, 'atc/reason', 3, ['atc/reason']]) expect(dropAtcMeta(value)).toBeUndefined();
  });

  it('keeps a key named __proto__ as a plain key, never as the prototype', () => {
    const kept = dropAtcMeta(JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.keys(kept).sort()).toEqual(['__proto__', 'a']);
    expect((kept as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('withoutAtcMeta', () => {
  it("removes `_meta` when only ledger keys were in it, and leaves a result without `_meta` as it is", () => {
    const plain = { content: [] };
    expect(withoutAtcMeta(plain)).toBe(plain);
    expect(withoutAtcMeta({ content: [], _meta: { 'atc/reason': 'x' } })).toEqual({ content: [] });
    expect(withoutAtcMeta({ content: [], _meta: { 'atc/reason': 'x', keep: true } })).toEqual({ content: [], _meta: { keep: true } });
  });
});
