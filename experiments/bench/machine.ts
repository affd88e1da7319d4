import { execFileSync } from 'node:child_process';
import * as os from 'node:os';

export interface Machine {
  readonly cpuModel: string;
  readonly cpuCount: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  readonly loadAverageAtStart: readonly number[];
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The commit the bench ran from, and whether the tree had local changes. */
/**
 * The commit checked out, and whether tracked files differ from it. `ignoring` names files whose
 * changes do not count: a run's own results file, which it rewrites between its steps.
 */
export function revision(ignoring: readonly string[] = []): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const excluded = ignoring.map((file) => `:(exclude)${file}`);
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ...excluded], { encoding: 'utf8' }).trim();
    return { commit, dirty: status.length > 0 };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}
