import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** test/support/pg-cluster.sh, which starts, pauses, crashes, resumes and stops a throwaway cluster. */
export const pgClusterScript = path.join(__dirname, 'pg-cluster.sh');

/** Runs pg-cluster.sh with `args`; what it printed. */
export function pgCluster(...args: string[]): string {
  return execFileSync(pgClusterScript, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A cluster of the file's own (once started: its URL and data directory). */
export interface OwnCluster {
  readonly url: string;
  readonly dir: string;
}

/**
 * For a test file that stops and starts a server, so runs its own cluster, not the shared one:
 * started before the file's tests and stopped after them. Call inside the file's `describePg`.
 */
export function ownPgCluster(): OwnCluster {
  let env: OwnCluster | undefined;
  beforeAll(() => {
    const exported = Object.fromEntries(
      pgCluster('start')
        .trim()
        .split('\n')
        .map((line) => line.replace(/^export /, '').split('=', 2) as [string, string]),
    );
    env = { url: exported.ATC_TEST_PG_URL as string, dir: exported.ATC_TEST_PG_DIR as string };
  });
  afterAll(() => {
    if (env !== undefined) pgCluster('stop', env.dir);
  });
  const started = (): OwnCluster => {
    if (env === undefined) throw new Error('the cluster is not started yet: read it inside a test');
    return env;
  };
  return {
    get url() {
      return started().url;
    },
    get dir() {
      return started().dir;
    },
  };
}
