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
export function revision(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
    return { commit, dirty: status.length > 0 };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}
