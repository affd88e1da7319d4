// One process of scenario 9 (PostgreSQL): kept alive across phases. Each phase message opens either
// a ledger on a fresh schema ('ours') or a plain pool ('raw'), answers ready, waits for the common
// window [startAt, startAt + ms), runs `callers` concurrent callers in it, and reports its count.
import { Pool } from 'pg';
import { openLedger, type Ledger } from '../../src';
import { createPostgresStore } from '../../src/stores/postgres/postgresStore';
import type { LockProtocol } from '../../src/stores/postgres/postgresLocking';
import { inputSchema, policy, request } from './policy';
import { RawBatcher, type RawRow } from './postgresRaw';
import { SkeletonBatcher } from './postgresSkeleton';

export type Phase =
  | { readonly kind: 'ours'; readonly url: string; readonly schema: string; readonly token: string; readonly callers: number; readonly protocol: LockProtocol; readonly optimistic: boolean; readonly asyncCommit: boolean; readonly flushWithCommit: boolean; readonly prefetch: boolean }
  | {
      readonly kind: 'raw';
      readonly url: string;
      readonly table: string;
      readonly rows: readonly RawRow[];
      readonly callers: number;
      /** A call's rows as sequential INSERTs (the admission, committed, then the settlement), as the ledger writes them. */
      readonly sequential?: boolean;
    }
  | { readonly kind: 'skeleton'; readonly url: string; readonly table: string; readonly rows: readonly RawRow[]; readonly callers: number };

export interface Go {
  readonly startAt: number;
  readonly ms: number;
}

export interface PhaseReport {
  readonly admissions: number;
  readonly failures: number;
  /** CPU this process used during the window (user + system), in ms. */
  readonly cpuMs: number;
  /** The skeleton only: rows other processes had appended, read under the lock. */
  readonly foreignRows?: number;
  readonly error?: string;
}

async function until(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

function nextMessage<T>(): Promise<T> {
  return new Promise((resolve) => process.once('message', (m: T) => resolve(m)));
}

async function runCallers(callers: number, end: number, call: (i: number) => Promise<boolean>): Promise<PhaseReport> {
  const cpu = process.cpuUsage();
  let admissions = 0;
  let failures = 0;
  let i = process.pid * 1e6;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < end) {
        if (await call(i++)) admissions++;
        else failures++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { admissions, failures, cpuMs: (used.user + used.system) / 1000 };
}

async function ours(phase: Extract<Phase, { kind: 'ours' }>): Promise<PhaseReport> {
  const store = createPostgresStore({ connectionString: phase.url, schema: phase.schema, poolSizeMax: 2 }, { protocol: phase.protocol, optimistic: phase.optimistic, asyncCommit: phase.asyncCommit, flushWithCommit: phase.flushWithCommit, prefetch: phase.prefetch });
  const ledger: Ledger = await openLedger({ store });
  await ledger.registerTool({ name: policy.tool, inputSchema, resources: (a: { path: string }) => [`fs:/${a.path}`], run: async () => undefined });
  process.send?.({ ready: true });
  const go = await nextMessage<Go>();
  await until(go.startAt);
  const report = await runCallers(phase.callers, go.startAt + go.ms, async (i) => (await ledger.invoke(phase.token, policy.tool, request(i))).status === 'completed');
  await ledger.close();
  return report;
}

/**
 * A baseline without the ledger: raw batched INSERTs (a call's two rows in one statement, or one
 * after the other), or the protocol's skeleton (postgresSkeleton.ts: a call's admission row
 * committed, then its settlement row).
 */
async function baseline(phase: Extract<Phase, { kind: 'raw' | 'skeleton' }>): Promise<PhaseReport> {
  const pool = new Pool({ connectionString: phase.url, max: 1 });
  pool.on('error', () => undefined);
  const skeleton = phase.kind === 'skeleton' ? new SkeletonBatcher(pool, phase.table) : undefined;
  const batcher = skeleton ?? new RawBatcher(pool, phase.table);
  await pool.query('SELECT 1');
  process.send?.({ ready: true });
  const go = await nextMessage<Go>();
  await until(go.startAt);
  const [admission, settlement] = phase.rows as [RawRow, RawRow];
  const sequential = phase.kind === 'skeleton' || phase.sequential === true;
  const insert = sequential ? () => batcher.insert([admission]).then(() => batcher.insert([settlement])) : () => batcher.insert(phase.rows);
  const report = await runCallers(phase.callers, go.startAt + go.ms, async () => insert().then(() => true, () => false));
  await pool.end();
  return skeleton === undefined ? report : { ...report, foreignRows: skeleton.foreignRows };
}

async function main(): Promise<void> {
  for (;;) {
    const phase = await nextMessage<Phase | { readonly kind: 'exit' }>();
    if (phase.kind === 'exit') return;
    try {
      process.send?.(phase.kind === 'ours' ? await ours(phase) : await baseline(phase));
    } catch (error) {
      process.send?.({ admissions: 0, failures: 0, cpuMs: 0, error: String((error as Error).stack ?? error) });
    }
  }
}

void main().then(() => process.exit(0));
