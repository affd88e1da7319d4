import { LedgerError, openLedger, verify, type InvokeOutcome, type Ledger } from '../../src';
import { postgresStore } from '../../src/postgres';
import { describePg, freshSchema } from '../support/pgTest';
import { ownPgCluster, pgCluster } from '../support/ownPgCluster';
import { hour } from '../support/pgLedger';

// This file stops and starts a server, so it runs its own throwaway cluster, not the shared one.
const boundMs = 2_000;

/** A ledger on a fresh schema with a `work` tool that records each call it runs, and a grant for it. */
async function workLedger(url: string): Promise<{ store: ReturnType<typeof postgresStore>; ledger: Ledger; ran: string[]; token: string }> {
  const store = postgresStore({ connectionString: url, schema: freshSchema(), timeoutMs: boundMs, catchUpIntervalMs: 50 });
  const ledger: Ledger = await openLedger({ store });
  const ran: string[] = [];
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: (_args, ctx) => void ran.push(ctx.callId) });
  const { token } = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 100_000, inputBytes: 10_000_000 } });
  return { store, ledger, ran, token };
}

describePg('a PostgreSQL server that stops and starts under load', () => {
  const env = ownPgCluster();

  it('fails calls closed within the bound while it is down (their tools never run), and the same ledger object recovers', async () => {
    const { store, ledger, ran, token } = await workLedger(env.url);

    // A steady load from 4 concurrent callers, running through the whole outage.
    const outcomes: InvokeOutcome[] = [];
    let stopping = false;
    const caller = async (): Promise<void> => {
      while (!stopping) outcomes.push(await ledger.invoke(token, 'work', {}));
    };
    const load = Promise.all(Array.from({ length: 4 }, caller));
    while (outcomes.filter((o) => o.status === 'completed').length < 20) await new Promise((resolve) => setImmediate(resolve));

    pgCluster('pause', env.dir);
    const downAt = outcomes.length;
    // The load's calls admitted before the stop are settled once the server is back (settlements are
    // retried, never dropped), so their callers wait; an admission sent just before the stop may
    // still commit (it is one round trip). Four more callers start during the outage.
    const outageLoad = Promise.all(Array.from({ length: 4 }, caller));
    const started = performance.now();
    const during = await ledger.invoke(token, 'work', {});
    expect(during).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(performance.now() - started).toBeLessThan(boundMs + 1_500);
    const issueError = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } }).catch((e: unknown) => e);
    expect(issueError).toBeInstanceOf(LedgerError);
    expect((issueError as LedgerError).code).toBe('ledger_unavailable');

    pgCluster('resume', env.dir);
    const after = await ledger.invoke(token, 'work', {});
    expect(after).toMatchObject({ status: 'completed' });
    stopping = true;
    await load;
    await outageLoad;
    expect(outcomes.slice(downAt).some((o) => o.status === 'rejected' && o.reason === 'ledger_unavailable')).toBe(true);
    await ledger.close();

    // The log: every tool that ran was admitted first; every acknowledged completion is there.
    const reopened = await openLedger({ store: postgresStore({ connectionString: env.url, schema: store.schema }) });
    const events = reopened.events();
    const admitted = new Set(events.flatMap((e) => (e.type === 'call.admitted' ? [e.callId] : [])));
    expect(ran.filter((id) => !admitted.has(id))).toEqual([]);
    const acknowledged = [...outcomes, during, after].filter((o) => o.status === 'completed').map((o) => o.callId);
    expect(acknowledged.filter((id) => !admitted.has(id))).toEqual([]);
    expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    await reopened.close();
  });

  it('loses nothing it acknowledged when the server crashes under load with commits not yet flushed, and the same ledger object goes on from the recovered log', async () => {
    const { store, ledger, ran, token } = await workLedger(env.url);
    // A second ledger on the same log, so that batches go through the lock (asynchronous commits).
    const other: Ledger = await openLedger({ store: postgresStore({ connectionString: env.url, schema: store.schema, timeoutMs: boundMs, catchUpIntervalMs: 50 }) });
    await other.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: (_args, ctx) => void ran.push(ctx.callId) });

    const outcomes: InvokeOutcome[] = [];
    let stopping = false;
    const caller = (on: Ledger) => async (): Promise<void> => {
      while (!stopping) outcomes.push(await on.invoke(token, 'work', {}));
    };
    const load = Promise.all([...Array.from({ length: 4 }, caller(ledger)), ...Array.from({ length: 4 }, caller(other))]);
    while (outcomes.filter((o) => o.status === 'completed').length < 40) await new Promise((resolve) => setImmediate(resolve));

    pgCluster('crash', env.dir);
    const during = await ledger.invoke(token, 'work', {});
    expect(during).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    pgCluster('resume', env.dir);
    // Calls queued during the outage may still be spending their deadline in the first batches
    // after recovery: the ledger recovers within a few calls.
    let after = await ledger.invoke(token, 'work', {});
    for (let i = 0; i < 10 && after.status !== 'completed'; i++) after = await ledger.invoke(token, 'work', {});
    expect(after).toMatchObject({ status: 'completed' });
    stopping = true;
    await load;
    await ledger.close();
    await other.close();

    const reopened = await openLedger({ store: postgresStore({ connectionString: env.url, schema: store.schema }) });
    const events = reopened.events();
    const admitted = new Set(events.flatMap((e) => (e.type === 'call.admitted' ? [e.callId] : [])));
    const completed = new Set(events.flatMap((e) => (e.type === 'call.completed' ? [e.callId] : [])));
    expect(ran.filter((id) => !admitted.has(id))).toEqual([]);
    const acknowledged = [...outcomes, after].filter((o) => o.status === 'completed').map((o) => o.callId);
    expect(acknowledged.filter((id) => !completed.has(id))).toEqual([]);
    // Neither ledger folded anything the crash took back: each one's view is a prefix of the log.
    expect(events.slice(0, ledger.events().length)).toEqual(ledger.events());
    expect(events.slice(0, other.events().length)).toEqual(other.events());
    expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    await reopened.close();
  });
});
