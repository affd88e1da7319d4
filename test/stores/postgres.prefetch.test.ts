import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { canonicalJson } from '../../src/domain/canonicalJson';
import { sealEvent } from '../../src/domain/chain';
import { openLedger, verify, type Ledger, type LedgerEvent } from '../../src';
import { isHashChecked } from '../../src/stream/hashChecked';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/postgresStore';
import { echoTool, hour } from '../support/pgLedger';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';

/** A store whose ledger never catches up on a timer: what it folds comes from its own transactions only. */
function quietStore(schema: string): PostgresStore {
  const store = createPostgresStore({ connectionString: url(), schema }, { prefetch: true });
  Object.defineProperty(store, 'catchUpIntervalMs', { value: 2 ** 31 - 1 });
  return store;
}

/** Resolves once `store`'s listener has taken in `count` more notifications from other writers. */
function notifications(store: PostgresStore, count: number): Promise<void> {
  return new Promise((resolve) => {
    let left = count;
    (store.prefetch as NonNullable<PostgresStore['prefetch']>).observer = () => {
      if (--left === 0) resolve();
    };
  });
}

/**
 * Runs `script` as a host process of its own, on built code (as the Jepsen fixtures do), with
 * `store` a prefetching PostgreSQL store on a fresh schema: what it printed and how it ended.
 */
function hostProcess(script: string, schemaTag: string): ReturnType<typeof spawnSync> & { stdout: string } {
  const store = "const store = require('./dist/src/stores/postgres/postgresStore').createPostgresStore({ connectionString: process.env.PG_URL, schema: process.env.PG_SCHEMA }, { prefetch: true }); ";
  return spawnSync(process.execPath, ['-e', store + script], {
    cwd: path.join(__dirname, '..', '..'),
    env: { ...process.env, PG_URL: url(), PG_SCHEMA: freshSchema(schemaTag) },
    timeout: 20_000,
    encoding: 'utf8',
  });
}

describePg('PostgreSQL: other hosts\' events prefetched by NOTIFY', () => {
  const admin = adminPool();
  const open: Ledger[] = [];
  afterAll(async () => {
    await Promise.all(open.map((l) => l.close()));
    await admin.end();
  });

  async function twoHosts(): Promise<{ schema: string; a: Ledger; b: Ledger; bStore: PostgresStore; token: string }> {
    const schema = freshSchema('prefetch');
    const a = await openLedger({ store: quietStore(schema) });
    await a.registerTool(echoTool);
    const { token } = await a.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 10_000 } });
    const bStore = quietStore(schema);
    const b = await openLedger({ store: bStore });
    await b.registerTool(echoTool);
    open.push(a, b);
    expect(await bStore.prefetch?.whenListening()).toBe(true);
    return { schema, a, b, bStore, token };
  }

  /** Two hosts after one call of A's, whose two notifications B has taken in; `seen` is B's event count before it. */
  async function twoHostsAfterACall(): Promise<Awaited<ReturnType<typeof twoHosts>> & { seen: number }> {
    const hosts = await twoHosts();
    const seen = hosts.b.events().length;
    // A's call is two transactions (admission, settlement), each notifying at its commit.
    const arrived = notifications(hosts.bStore, 2);
    expect(await hosts.a.invoke(hosts.token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    await arrived;
    return { ...hosts, seen };
  }

  async function logOf(schema: string): Promise<readonly LedgerEvent[]> {
    const fresh = await openLedger({ store: createPostgresStore({ connectionString: url(), schema }) });
    const events = fresh.events();
    await fresh.close();
    return events;
  }

  it('folds another host\'s events, hash-checked on arrival, only in its next transaction', async () => {
    const { schema, b, bStore, token, seen } = await twoHostsAfterACall();
    // Received, not folded: nothing of it is in B's state or events until B's lock holds.
    expect(b.events()).toHaveLength(seen);
    expect(bStore.prefetch?.size).toBe(2);

    expect(await b.invoke(token, 'echo', { text: 'b' })).toMatchObject({ status: 'completed' });
    const folded = b.events().slice(seen, seen + 2);
    expect(folded.map((e) => e.type)).toEqual(['call.admitted', 'call.completed']);
    expect(folded.every(isHashChecked)).toBe(true);
    expect(b.events()).toEqual(await logOf(schema));
    expect(verify(b.events())).toMatchObject({ ok: true, problems: [] });
  });

  it('uses no notified event whose body is not the stored row\'s: a forged notification costs only the parse', async () => {
    const { schema, a, b, bStore, token, seen } = await twoHostsAfterACall();
    // Any role may NOTIFY: a well-formed, correctly hashed event at the same seq, that is not the log's.
    const real = a.events()[seen] as LedgerEvent;
    const { seq, at, prevHash, hash: _hash, ...payload } = real as LedgerEvent & { callId: string };
    const forged = sealEvent({ ...payload, callId: 'forged' } as never, at, { seq: seq - 1, hash: prevHash });
    const forgedArrived = notifications(bStore, 1);
    await admin.query('SELECT pg_notify($1, $2)', [bStore.prefetch?.channel, `forger\n${canonicalJson(forged)}`]);
    await forgedArrived;

    expect(await b.invoke(token, 'echo', { text: 'b' })).toMatchObject({ status: 'completed' });
    const log = await logOf(schema);
    expect(b.events()).toEqual(log);
    expect(b.events().some((e) => (e as { callId?: string }).callId === 'forged')).toBe(false);
    // The forged event displaced the real one in the prefetch, so the real one was parsed from its row.
    expect(isHashChecked(b.events()[seen] as LedgerEvent)).toBe(false);
    expect(isHashChecked(b.events()[seen + 1] as LedgerEvent)).toBe(true);
  });

  it('does not keep an idle host process alive (its listening session, like the pool, lets it exit)', () => {
    // A host that opens a ledger and never closes it. A timer holds the process until the session
    // listens; after that nothing should.
    const child = hostProcess(
      "const hold = setInterval(() => undefined, 1000); " +
        "require('./dist/src').openLedger({ store }).then(() => store.prefetch.whenListening()).then((listening) => { console.log(listening ? 'listening' : 'not listening'); clearInterval(hold); })",
      'exit',
    );
    expect(child.stdout).toContain('listening');
    expect(child.stdout).not.toContain('not listening');
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
  });

  it.each([
    ['right after opening (its listening session still connecting)', ''],
    // (A timer holds the process until the session listens, as a busy host would; then nothing does.)
    ['once its session listens', '.then(() => store.prefetch.whenListening())'],
  ])('lets a host that closes its ledger %s go on after close resolves', (_when, wait) => {
    // Nothing else holds the process: a listener's socket ended while unref'd let it exit inside `close`.
    const script =
      'const hold = setInterval(() => undefined, 1000); ' +
      `require('./dist/src').openLedger({ store }).then((ledger) => Promise.resolve()${wait}.then(() => { clearInterval(hold); return ledger.close(); })).then(() => console.log('after close'))`;
    for (let run = 0; run < 5; run++) {
      const child = hostProcess(script, 'close');
      expect(child.stdout).toContain('after close');
      expect(child.status).toBe(0);
    }
  });

  it('goes on when its listening session is lost (what it would have prefetched is parsed under the lock)', async () => {
    const { schema, a, b, bStore, token } = await twoHosts();
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`, [`LISTEN "${bStore.prefetch?.channel}"`]);
    expect(await a.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    expect(await b.invoke(token, 'echo', { text: 'b' })).toMatchObject({ status: 'completed' });
    expect(await a.invoke(token, 'echo', { text: 'a2' })).toMatchObject({ status: 'completed' });
    expect(await b.invoke(token, 'echo', { text: 'b2' })).toMatchObject({ status: 'completed' });
    expect(b.events()).toEqual(await logOf(schema));
    expect(verify(b.events())).toMatchObject({ ok: true, problems: [] });
  });
});
