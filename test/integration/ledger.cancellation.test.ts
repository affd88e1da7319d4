import { createLedger, replay, verify, type Ledger } from '../../src';

const hour = 3_600_000;

async function slowLedger(options: { onToolError?: 'consume' | 'refund' } = {}): Promise<{ ledger: Ledger; token: string; grantId: string; started: Promise<AbortSignal>; release: (value: string) => void }> {
  const ledger = createLedger(options);
  let release: (value: string) => void = () => undefined;
  let markStarted: (signal: AbortSignal) => void = () => undefined;
  const started = new Promise<AbortSignal>((resolve) => (markStarted = resolve));
  await ledger.registerTool({
    name: 'slow',
    inputSchema: { type: 'object', properties: {} },
    run: (_args, ctx) =>
      new Promise<string>((resolve, reject) => {
        release = resolve;
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        markStarted(ctx.signal);
      }),
  });
  const { token, grantId } = await ledger.issue({ tools: ['slow'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 100 } });
  return { ledger, token, grantId, started, release: (v) => release(v) };
}

describe('cancelling a call through invoke options', () => {
  it('aborts ctx.signal and settles the call as call.failed with cancelled: true', async () => {
    const { ledger, token, started } = await slowLedger();
    const cancel = new AbortController();
    const call = ledger.invoke(token, 'slow', {}, { signal: cancel.signal });
    const signal = await started;
    cancel.abort();
    expect(signal.aborted).toBe(true);
    expect(await call).toMatchObject({ status: 'failed' });
    const failed = ledger.events().find((e) => e.type === 'call.failed');
    expect(failed).toMatchObject({ type: 'call.failed', cancelled: true, refunded: { calls: 0, inputBytes: 0 } });
    await ledger.close();
  });

  it('gives the reservation back for a cancelled call when onToolError is refund', async () => {
    const { ledger, token, grantId, started } = await slowLedger({ onToolError: 'refund' });
    const cancel = new AbortController();
    const call = ledger.invoke(token, 'slow', {}, { signal: cancel.signal });
    await started;
    cancel.abort();
    await call;
    expect(ledger.usage(grantId).calls.used).toBe(0);
    await ledger.close();
  });

  it('does not run the tool when the signal is already aborted at admission', async () => {
    const ledger = createLedger();
    let runs = 0;
    await ledger.registerTool({ name: 'counted', inputSchema: { type: 'object', properties: {} }, run: () => ++runs });
    const { token } = await ledger.issue({ tools: ['counted'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 100 } });
    const outcome = await ledger.invoke(token, 'counted', {}, { signal: AbortSignal.abort() });
    expect(outcome.status).toBe('failed');
    expect(runs).toBe(0);
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.failed', cancelled: true });
    await ledger.close();
  });

  it('completes normally when the tool returns before the cancellation', async () => {
    const { ledger, token, started, release } = await slowLedger();
    const cancel = new AbortController();
    const call = ledger.invoke(token, 'slow', {}, { signal: cancel.signal });
    await started;
    release('done');
    expect(await call).toMatchObject({ status: 'completed', value: 'done' });
    cancel.abort();
    expect(ledger.events().some((e) => e.type === 'call.failed')).toBe(false);
    await ledger.close();
  });

  it('leaves a log that verifies and replays to the live state', async () => {
    const { ledger, token, started } = await slowLedger();
    const cancel = new AbortController();
    const call = ledger.invoke(token, 'slow', {}, { signal: cancel.signal });
    await started;
    cancel.abort();
    await call;
    expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
    expect(replay(ledger.events())).toEqual(ledger.state());
    await ledger.close();
  });

  it('makes verify refuse a cancelled flag that is not true', async () => {
    const { ledger, token, started } = await slowLedger();
    const cancel = new AbortController();
    const call = ledger.invoke(token, 'slow', {}, { signal: cancel.signal });
    await started;
    cancel.abort();
    await call;
    const edited = ledger.events().map((e) => (e.type === 'call.failed' ? { ...e, cancelled: false } : e));
    expect(verify(edited as never).ok).toBe(false);
    await ledger.close();
  });
});

describe('resource templates recorded at issue', () => {
  async function ledgerWithTool(): Promise<Ledger> {
    const ledger = createLedger();
    await ledger.registerTool({ name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, run: () => 'x' });
    return ledger;
  }

  it('puts the templates in the grant.issued event, and verify re-derives it', async () => {
    const ledger = await ledgerWithTool();
    const { grantId } = await ledger.issue({ tools: ['read_file'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 }, resourceTemplates: { read_file: ['fs:{path}'] } });
    expect(ledger.events().find((e) => e.type === 'grant.issued')).toMatchObject({ grantId, resourceTemplates: { read_file: ['fs:{path}'] } });
    expect(verify(ledger.events())).toMatchObject({ ok: true });
    const edited = ledger.events().map((e) => (e.type === 'grant.issued' ? { ...e, resourceTemplates: { read_file: ['fs:{other}'] } } : e));
    expect(verify(edited).ok).toBe(false);
    await ledger.close();
  });

  it('leaves the event without the field when no templates are given', async () => {
    const ledger = await ledgerWithTool();
    await ledger.issue({ tools: ['read_file'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    expect(ledger.events().find((e) => e.type === 'grant.issued')).not.toHaveProperty('resourceTemplates');
    await ledger.close();
  });

  it('refuses templates for a tool the grant does not include', async () => {
    const ledger = await ledgerWithTool();
    await expect(ledger.issue({ tools: ['read_file'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 }, resourceTemplates: { write_file: ['fs:{path}'] } })).rejects.toThrow(/resourceTemplates names tool "write_file"/);
    await ledger.close();
  });
});
