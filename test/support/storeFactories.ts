import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Pool } from 'pg';
import { canonicalJson, memoryStore, sqliteStore, type AsyncEventStore, type EventStore, type LedgerEvent, type SqliteEventStore } from '../../src';
import { postgresStore, type PostgresEventStore } from '../../src/postgres';
import { adminPool, describePg, freshSchema, url } from './pgTest';

// The factories the store contract suite (test/stores/contract.test.ts) runs against: one per store.
// A store is done when the suite passes on it; docs/stores.md says how to add a factory.

/** What a store offers beyond append, load, head and the chain check on open (which every store has). */
export type StoreCapability =
  /** A log outside the process, guarded by the store itself: migrations, an append-only table, a write lock. */
  | 'durable'
  /** Several ledgers (threads, processes, hosts) write one log; each folds the others' events. */
  | 'sharedWriters'
  /** Snapshots of the folded state, bound to the log, to open from. */
  | 'snapshots'
  /** A read-only store: opens an existing log without changing it. */
  | 'readonly'
  /** A settlement journal outside the log that a new store object on the same log finds. */
  | 'journal';

/** A statement that would change stored events (its SQL verb), and what the store threw for it. */
export interface RefusedChange {
  readonly verb: 'UPDATE' | 'DELETE' | 'TRUNCATE';
  readonly error: unknown;
}

export interface LogOptions {
  /** Write a snapshot every this many events (0: never). Default: the store's. */
  readonly snapshotEvery?: number;
  readonly readonly?: boolean;
  /** The longest a write waits for another holder of the log's lock before failing closed. */
  readonly lockWaitMs?: number;
}

/** One fresh log in a store, and what the suite does to it from outside the ledger. */
export interface LogUnderTest {
  /** A store object on this log: a new connection for a durable store, the one log object for memory. */
  store(options?: LogOptions): EventStore | AsyncEventStore;
  /** Rewrites the body of the stored event at `seq` past the store's guards (file access, a superuser). */
  tamper(seq: number, edit: (body: string) => string): Promise<void>;
  /** The seq of the snapshot `store` opened from, if any (stores with snapshots). */
  openedFromSnapshotSeq(store: EventStore | AsyncEventStore): number | undefined;
  /** Holds the log's write lock from outside until the returned function releases it (durable stores). */
  holdWriteLock(): Promise<() => Promise<void>>;
  /** The rows of the store's migration table, by id (durable stores). */
  appliedMigrations(): Promise<readonly { readonly id: number; readonly name: string }[]>;
  /** Tries every statement that would change or remove stored events; what each threw (durable stores). */
  changeStoredEvents(): Promise<readonly RefusedChange[]>;
  /** How many events the store holds, read from outside the ledger. */
  storedCount(): Promise<number>;
  /** The seqs of the snapshots the store holds, ascending (stores with snapshots). */
  snapshotSeqs(): Promise<readonly number[]>;
}

export interface StoreFactory {
  readonly name: string;
  /** `describe`, or `describePg` for a store that needs the test cluster (ATC_TEST_PG_URL). */
  readonly describe: (name: string, body: () => void) => void;
  readonly offers: ReadonlySet<StoreCapability>;
  /** A new, empty log. */
  fresh(): LogUnderTest;
  /** Releases what the factory made (files, pools); called once after the suite. */
  cleanup(): Promise<void>;
}

function notOffered(store: string, what: string): never {
  throw new Error(`the ${store} store has no ${what}: the suite asked for a capability the factory does not declare`);
}

function editEvent(event: LedgerEvent, edit: (body: string) => string): LedgerEvent {
  return JSON.parse(edit(canonicalJson(event))) as LedgerEvent;
}

export const memoryFactory: StoreFactory = {
  name: 'memory',
  describe,
  offers: new Set(),
  fresh() {
    const store = memoryStore();
    // The memory store hands out its own array: the one place the log lives.
    const log = (): LedgerEvent[] => store.load() as LedgerEvent[];
    return {
      store: () => store,
      async tamper(seq, edit) {
        log()[seq - 1] = editEvent(log()[seq - 1] as LedgerEvent, edit);
      },
      openedFromSnapshotSeq: () => notOffered('memory', 'snapshots'),
      holdWriteLock: () => notOffered('memory', 'write lock'),
      appliedMigrations: () => notOffered('memory', 'migrations'),
      changeStoredEvents: () => notOffered('memory', 'stored table'),
      storedCount: async () => store.size,
      snapshotSeqs: () => notOffered('memory', 'snapshots'),
    };
  },
  cleanup: async () => undefined,
};

function sqliteFactory(): StoreFactory {
  let dir: string | undefined;
  let logs = 0;
  const withDb = <T>(file: string, use: (db: Database.Database) => T): T => {
    const db = new Database(file);
    try {
      return use(db);
    } finally {
      db.close();
    }
  };
  return {
    name: 'sqlite',
    describe,
    offers: new Set<StoreCapability>(['durable', 'sharedWriters', 'snapshots', 'readonly', 'journal']),
    fresh() {
      dir ??= mkdtempSync(path.join(os.tmpdir(), 'atc-contract-'));
      const file = path.join(dir, `log-${++logs}.sqlite`);
      return {
        store: (options = {}) => sqliteStore({ path: file, snapshotEvery: options.snapshotEvery, readonly: options.readonly, busyTimeoutMs: options.lockWaitMs }),
        async tamper(seq, edit) {
          withDb(file, (db) => {
            db.exec('DROP TRIGGER IF EXISTS events_refuse_update; DROP TRIGGER IF EXISTS events_refuse_delete;');
            const body = db.prepare('SELECT body FROM events WHERE seq = ?').pluck().get(seq) as string;
            db.prepare('UPDATE events SET body = ? WHERE seq = ?').run(edit(body), seq);
          });
        },
        openedFromSnapshotSeq: (store) => (store as SqliteEventStore).openedFromSnapshotSeq,
        async holdWriteLock() {
          const db = new Database(file);
          db.exec('BEGIN IMMEDIATE');
          return async () => {
            db.exec('COMMIT');
            db.close();
          };
        },
        appliedMigrations: async () => withDb(file, (db) => db.prepare('SELECT id, name FROM schema_migrations ORDER BY id').all() as { id: number; name: string }[]),
        changeStoredEvents: async () =>
          withDb(file, (db) =>
            (['UPDATE events SET at = 0', 'DELETE FROM events'] as const).map((sql) => {
              const verb = sql.startsWith('UPDATE') ? 'UPDATE' : 'DELETE';
              try {
                db.prepare(sql).run();
                return { verb, error: undefined };
              } catch (error) {
                return { verb, error };
              }
            }),
          ),
        storedCount: async () => withDb(file, (db) => db.prepare('SELECT count(*) FROM events').pluck().get() as number),
        snapshotSeqs: async () => withDb(file, (db) => db.prepare('SELECT seq FROM snapshots ORDER BY seq').pluck().all() as number[]),
      };
    },
    cleanup: async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresFactory(): StoreFactory {
  let admin: Pool | undefined;
  let dir: string | undefined;
  const pool = (): Pool => (admin ??= adminPool());
  return {
    name: 'postgres',
    describe: describePg,
    offers: new Set<StoreCapability>(['durable', 'sharedWriters', 'snapshots', 'readonly', 'journal']),
    fresh() {
      const schema = freshSchema('contract');
      dir ??= mkdtempSync(path.join(os.tmpdir(), 'atc-contract-pg-'));
      // Per log, so that journals of different logs never meet (the store keys them by schema too).
      const settlementsDir = path.join(dir, schema);
      return {
        store: (options = {}) =>
          postgresStore({ connectionString: url(), schema, catchUpIntervalMs: 50, settlementsDir, snapshotEvery: options.snapshotEvery, readonly: options.readonly, timeoutMs: options.lockWaitMs }),
        async tamper(seq, edit) {
          const body = (await pool().query(`SELECT body FROM ${schema}.events WHERE seq = $1`, [seq])).rows[0].body as string;
          await pool().query(`ALTER TABLE ${schema}.events DISABLE TRIGGER USER`);
          await pool().query(`UPDATE ${schema}.events SET body = $1 WHERE seq = $2`, [edit(body), seq]);
          await pool().query(`ALTER TABLE ${schema}.events ENABLE TRIGGER USER`);
        },
        openedFromSnapshotSeq: (store) => (store as PostgresEventStore).openedFromSnapshotSeq,
        async holdWriteLock() {
          const holder = await pool().connect();
          await holder.query(`BEGIN; SELECT FROM ${schema}.log_lock FOR UPDATE`);
          return async () => {
            await holder.query('COMMIT');
            holder.release();
          };
        },
        appliedMigrations: async () => (await pool().query(`SELECT id, name FROM ${schema}.schema_migrations ORDER BY id`)).rows as { id: number; name: string }[],
        async changeStoredEvents() {
          const refused: RefusedChange[] = [];
          const statements = { UPDATE: `UPDATE ${schema}.events SET at = 0`, DELETE: `DELETE FROM ${schema}.events`, TRUNCATE: `TRUNCATE ${schema}.events` } as const;
          for (const [verb, sql] of Object.entries(statements) as [RefusedChange['verb'], string][]) {
            refused.push({ verb, error: await pool().query(sql).then(() => undefined, (error: unknown) => error) });
          }
          return refused;
        },
        storedCount: async () => (await pool().query(`SELECT count(*)::int AS n FROM ${schema}.events`)).rows[0].n as number,
        snapshotSeqs: async () => (await pool().query(`SELECT seq FROM ${schema}.snapshots ORDER BY seq`)).rows.map((r: { seq: string }) => Number(r.seq)),
      };
    },
    async cleanup() {
      await admin?.end();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every store the package ships, each with its factory. */
export const storeFactories: readonly StoreFactory[] = [memoryFactory, sqliteFactory(), postgresFactory()];
