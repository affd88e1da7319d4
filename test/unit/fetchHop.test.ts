import { sealEvent } from '../../src/domain/chain';
import type { EventPayload, LedgerEvent } from '../../src/domain/events';
import { verify } from '../../src/verification/verify';
import { hopDecision } from '../../src/domain/fetchHop';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from '../support/given';

/** The payload of a logged event (without its chain envelope), to re-seal an edited copy. */
function payloadOf(event: LedgerEvent): EventPayload {
  const copy: Record<string, unknown> = { ...event };
  for (const key of ['seq', 'at', 'prevHash', 'hash']) delete copy[key];
  return copy as unknown as EventPayload;
}

const scopes = ['https:/api.example.com:443/v1/', 'http:/127.0.0.1:8080/', 'http:/app.test:8080/'];
const hop = (resource: string | undefined, address: string | undefined, n = 0) => hopDecision(scopes, { hop: n, resource, address });

describe('hopDecision: one hop of ctx.fetch against the grant scopes', () => {
  it('allows a covered resource at a public address', () => {
    expect(hop('https:/api.example.com:443/v1/x', '93.184.216.34')).toBe('allowed');
  });
  it('refuses a resource outside every scope before looking at the address', () => {
    expect(hop('https:/api.example.com:443/v2/x', undefined)).toBe('resource_not_permitted');
    expect(hop('https:/api.example.com.evil.test:443/v1/x', '93.184.216.34')).toBe('resource_not_permitted');
    expect(hop('http:/api.example.com:80/v1/x', '93.184.216.34')).toBe('resource_not_permitted');
  });
  it('refuses a covered name that resolves to loopback, private or link-local unless a scope names the address', () => {
    expect(hop('https:/api.example.com:443/v1/x', '127.0.0.1')).toBe('address_not_permitted');
    expect(hop('https:/api.example.com:443/v1/x', '169.254.169.254')).toBe('address_not_permitted');
    expect(hop('https:/api.example.com:443/v1/x', '::ffff:10.0.0.1')).toBe('address_not_permitted');
    // app.test:8080 resolving to 127.0.0.1 reaches http:/127.0.0.1:8080/, which is named literally.
    expect(hop('http:/app.test:8080/a', '127.0.0.1')).toBe('allowed');
    expect(hop('http:/app.test:8080/a', '127.0.0.2')).toBe('address_not_permitted');
  });
  it('allows a literal loopback URL only on the named port and scheme', () => {
    expect(hop('http:/127.0.0.1:8080/a', '127.0.0.1')).toBe('allowed');
    expect(hop('http:/127.0.0.1:8081/a', '127.0.0.1')).toBe('resource_not_permitted');
  });
  it('does not count a scheme-wide scope as naming an address', () => {
    expect(hopDecision(['http:/'], { hop: 0, resource: 'http:/127.0.0.1:9/a', address: '127.0.0.1' })).toBe('address_not_permitted');
    expect(hopDecision(['http:/'], { hop: 0, resource: 'http:/example.com:80/a', address: '93.184.216.34' })).toBe('allowed');
  });
  it('refuses a literal host connected to another address, a missing resource, a non-URL resource and a bad address', () => {
    expect(hop('http:/127.0.0.1:8080/a', '93.184.216.34')).toBe('invalid_resource');
    expect(hop(undefined, undefined)).toBe('invalid_resource');
    expect(hopDecision(['fs:/'], { hop: 0, resource: 'fs:/etc/passwd', address: '93.184.216.34' })).toBe('invalid_resource');
    expect(hop('https:/api.example.com:443/v1/x', 'not-an-ip')).toBe('invalid_resource');
    expect(hop('https:/api.example.com:443/v1/x', undefined)).toBe('invalid_resource');
  });
  it('refuses the eleventh redirect', () => {
    expect(hop('https:/api.example.com:443/v1/x', '93.184.216.34', 10)).toBe('allowed');
    expect(hop('https:/api.example.com:443/v1/x', '93.184.216.34', 11)).toBe('redirect_limit');
  });
});

describe('fetch.hop events', () => {
  const issue = issueCommand({ resources: scopes });
  const running = [registerNotes, issue, admit()] as const;

  it('are decided for a call in flight and carry the outcome and reason', () => {
    const refused = payloads(given(...running).when({ type: 'hop', at: T0 + 2, callId: 'c1', hop: 1, resource: 'https:/api.example.com:443/v1/x', address: '127.0.0.1' }));
    expect(refused).toEqual([
      { type: 'fetch.hop', callId: 'c1', grantId: 'g1', tool: 'notes.write', hop: 1, resource: 'https:/api.example.com:443/v1/x', address: '127.0.0.1', outcome: 'refused', reason: 'address_not_permitted' },
    ]);
  });

  it('are refused for a call that is not in flight (a tool that kept ctx after it settled)', () => {
    const settled = given(...running, { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false });
    const decision = settled.when({ type: 'hop', at: T0 + 3, callId: 'c1', hop: 0, resource: 'http:/127.0.0.1:8080/a', address: '127.0.0.1' });
    expect(decision).toEqual(expect.objectContaining({ ok: false, code: 'unknown_call' }));
  });

  it('are re-derived by verify: a log that says allowed where the scopes refuse does not verify', () => {
    const { events } = given(...running, { type: 'hop', at: T0 + 2, callId: 'c1', hop: 0, resource: 'http:/127.0.0.1:8080/a', address: '127.0.0.1' });
    const forged = events;
    expect(verify(events)).toEqual({ ok: true, checked: events.length, problems: [] });
    const last = events[events.length - 1] as LedgerEvent;
    expect(last).toEqual(expect.objectContaining({ type: 'fetch.hop', outcome: 'allowed' }));
    // Forge: a port no scope names, still marked allowed (re-sealed, so only the decision is wrong).
    const before = forged[forged.length - 2] as LedgerEvent;
    const edited = sealEvent({ ...payloadOf(last), resource: 'http:/127.0.0.1:9999/a' } as EventPayload, last.at, before);
    const result = verify([...forged.slice(0, -1), edited]);
    expect(result.ok).toBe(false);
    expect(result.problems).toContainEqual(expect.objectContaining({ seq: last.seq, code: 'decision' }));
  });

  it('after the call settled do not verify', () => {
    const { events } = given(...running, { type: 'hop', at: T0 + 2, callId: 'c1', hop: 0, resource: 'http:/127.0.0.1:8080/a', address: '127.0.0.1' });
    const hopEvent = events[events.length - 1] as LedgerEvent;
    const settled = given(...running, { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false }).events;
    const tail = settled[settled.length - 1] as LedgerEvent;
    const late = sealEvent(payloadOf(hopEvent), T0 + 3, tail);
    expect(verify([...settled, late]).problems).toContainEqual(expect.objectContaining({ seq: tail.seq + 1, code: 'decision' }));
  });
});
