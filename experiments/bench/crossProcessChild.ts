// One of scenario 5's processes: opens the shared SQLite ledger, reports ready, then waits for "go"
// carrying a common wall-clock window [startAt, startAt + ms). Every process starts and stops its
// callers at the same instants, so no process gets a head start or a solo tail, and only calls
// started inside the window are counted.
import { createLedger, sqliteStore } from '../../src';
import { inputSchema, policy, request } from './policy';

interface Go {
  readonly startAt: number;
  readonly ms: number;
}

/** Sleeps (without spinning) until the wall clock reaches `at`. */
async function until(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  while (Date.now() < at) await new Promise((resolve) => setImmediate(resolve));
}

async function main(): Promise<void> {
  const [file, token, callers, id] = process.argv.slice(2) as [string, string, string, string];
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: policy.tool, inputSchema, resources: (a: { path: string; length: number }) => [`fs:/${a.path}`], run: async () => undefined });
  const go = new Promise<Go>((resolve) => process.once('message', (m: Go) => resolve(m)));
  process.send?.({ ready: true });
  const { startAt, ms } = await go;
  await until(startAt);
  const end = startAt + ms;
  const lat: number[] = [];
  // Wall-clock ms (from startAt) at which each of this process's calls completed: gaps show stalls.
  const doneAt: number[] = [];
  let i = Number(id) * 1e7;
  let failures = 0;
  await Promise.all(
    Array.from({ length: Number(callers) }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        const o = await ledger.invoke(token, policy.tool, request(i++));
        lat.push(Number(process.hrtime.bigint() - t));
        doneAt.push(Date.now() - startAt);
        if (o.status !== 'completed') failures++;
      }
    }),
  );
  await ledger.close();
  process.send?.({ lat, doneAt, failures });
}

void main().catch((error: unknown) => {
  process.send?.({ error: String((error as Error).stack ?? error) });
  process.exitCode = 1;
});
