// One of scenario 5's processes: opens the shared SQLite ledger, waits for "go", runs `callers`
// sequential callers for `ms`, and reports its latencies.
import { createLedger, sqliteStore } from '../../src';
import { inputSchema, policy, request } from './policy';

async function main(): Promise<void> {
  const [file, token, ms, callers, id] = process.argv.slice(2) as [string, string, string, string, string];
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: policy.tool, inputSchema, resources: (a: { path: string; length: number }) => [`fs:/${a.path}`], run: async () => undefined });
  process.send?.({ ready: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const lat: number[] = [];
  const until = Date.now() + Number(ms);
  let i = Number(id) * 1e7;
  let failures = 0;
  await Promise.all(
    Array.from({ length: Number(callers) }, async () => {
      while (Date.now() < until) {
        const t = process.hrtime.bigint();
        const o = await ledger.invoke(token, policy.tool, request(i++));
        lat.push(Number(process.hrtime.bigint() - t));
        if (o.status !== 'completed') failures++;
      }
    }),
  );
  await ledger.close();
  process.send?.({ lat, failures });
}

void main().catch((error: unknown) => {
  process.send?.({ error: String((error as Error).stack ?? error) });
  process.exitCode = 1;
});
