import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';

/**
 * The throwaway PostgreSQL cluster the tests use (`.ci/run` starts it with test/support/pg-cluster.sh
 * and exports ATC_TEST_PG_URL). Without it a PostgreSQL test fails in CI (CI=true) and is skipped
 * locally, saying why either way.
 */
export const pgUrl = process.env.ATC_TEST_PG_URL;
const inCi = process.env.CI === 'true';
const why = 'ATC_TEST_PG_URL is not set: start a cluster with `eval "$(test/support/pg-cluster.sh start)"` (.ci/run does)';

/** `describe` when a server is there; otherwise a failing test in CI, a skipped one locally. */
export function describePg(name: string, body: () => void): void {
  if (pgUrl !== undefined && pgUrl !== '') {
    describe(name, body);
    return;
  }
  if (inCi) {
    describe(name, () => {
      it('needs a PostgreSQL server', () => {
        throw new Error(`${name}: ${why}`);
      });
    });
    return;
  }
  // eslint-disable-next-line no-console
  console.warn(`skipping "${name}": ${why}`);
  describe.skip(name, body);
}

export function url(): string {
  return pgUrl as string;
}

/** A fresh schema name: every test gets its own ledger. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A pool for the test's own queries (checking rows, creating roles). */
export function adminPool(): Pool {
  const pool = new Pool({ connectionString: url(), max: 2 });
  pool.on('error', () => undefined);
  return pool;
}
