import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { openLedger, verify, type Ledger } from '../../src';
import { postgresStore } from '../../src/postgres';
import { hour } from '../support/pgLedger';
import { describePg, freshSchema } from '../support/pgTest';
import { ownPgCluster, pgCluster, pgClusterScript } from '../support/ownPgCluster';

// This file stops and starts a server, so it runs its own throwaway cluster, not the shared one.
const client = path.join(__dirname, '..', 'fixtures', 'pg-settlement-client.js');

function journalFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
}

describePg('settlements the PostgreSQL server could not take', () => {
  const env = ownPgCluster();
  let settlementsDir: string;
  beforeEach(() => {
    settlementsDir = mkdtempSync(path.join(tmpdir(), 'atc-pg-settlements-'));
  });
  afterEach(() => rmSync(settlementsDir, { recursive: true, force: true }));

  /** The log as a fresh ledger on the same schema and journal directory finds it once open. */
  async function reopen(schema: string): Promise<Ledger> {
    return openLedger({ store: postgresStore({ connectionString: env.url, schema, settlementsDir, timeoutMs: 2_000, retriesMax: 2 }) });
  }

  it('settles on the next open, in another process, what a ledger SIGKILLed while the server was down had journalled', async () => {
    const schema = freshSchema();
    const plan = { url: env.url, schema, settlementsDir, clusterScript: pgClusterScript, clusterDir: env.dir };
    const child = spawn(process.execPath, [client, JSON.stringify(plan)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(String(signal ?? code))));
    let callId = '';
    await new Promise<void>((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith('{')) callId = (JSON.parse(line) as { callId: string }).callId;
        if (line === 'journaled') resolve();
      });
      void exited.then((how) => reject(new Error(`client exited ${how}: ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(journalFiles(settlementsDir)).toHaveLength(1);

    pgCluster('resume', env.dir);
    const ledger = await reopen(schema);
    await ledger.close(); // waits for the settlements it took over
    const reopened = await reopen(schema);
    const events = reopened.events();
    expect(events.filter((e) => e.type === 'call.completed' && e.callId === callId)).toHaveLength(1);
    expect(reopened.inFlight()).toEqual([]);
    expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    expect(journalFiles(settlementsDir)).toEqual([]);
    await reopened.close();
  });

  it('settles on the next open what a ledger closed while the server was down could not, with the tool\'s meter report (a new store object: not from memory)', async () => {
    const schema = freshSchema();
    const ledger = await reopen(schema);
    let callId = '';
    await ledger.registerTool({
      name: 'work',
      inputSchema: { type: 'object' },
      cost: () => ({ usd_micros: 50 }),
      run: (_args, ctx) => {
        callId = ctx.callId;
        ctx.report({ usd_micros: 30 });
        pgCluster('pause', env.dir);
        return 'done';
      },
    });
    const { token, grantId } = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 100 } } });
    const invoked = ledger.invoke(token, 'work', {});
    // close() gives the settlement one more attempt; the server is down, so the journal keeps it.
    await ledger.close();
    expect(await invoked).toMatchObject({ status: 'completed', value: 'done' });
    expect(journalFiles(settlementsDir)).toHaveLength(1);

    pgCluster('resume', env.dir);
    const taker = await reopen(schema);
    await taker.close();
    const reopened = await reopen(schema);
    const settled = reopened.events().filter((e) => e.type === 'call.completed' && e.callId === callId);
    expect(settled).toHaveLength(1);
    // The tool's report travelled through the journal: 30 charged, the other 20 released.
    expect(settled[0]).toMatchObject({ charged: { usd_micros: 30 } });
    expect(reopened.usage(grantId).meters).toEqual({ usd_micros: { limit: 100, used: 30 } });
    expect(reopened.inFlight()).toEqual([]);
    expect(journalFiles(settlementsDir)).toEqual([]);
    await reopened.close();
  });

  it('keeps the journals of different logs apart: a ledger never takes over (and drops) another log\'s entries', async () => {
    const first = freshSchema();
    const ledger = await reopen(first);
    await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => void pgCluster('pause', env.dir) });
    const { token } = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    const invoked = ledger.invoke(token, 'work', {});
    await ledger.close();
    await invoked;
    pgCluster('resume', env.dir);
    const kept = journalFiles(settlementsDir);
    expect(kept).toHaveLength(1);

    // Another schema's ledger with the same directory: the first log's entry is left alone.
    const other = await reopen(freshSchema());
    await other.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => undefined });
    await other.close();
    expect(journalFiles(settlementsDir)).toEqual(kept);

    const taker = await reopen(first);
    await taker.close();
    expect(journalFiles(settlementsDir)).toEqual([]);
  });
});
