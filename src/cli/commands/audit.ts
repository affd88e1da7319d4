import type { CliCommand } from '../command';
import { auditHeader, auditLine, DecisionReader, followDecisions, type AuditFilter, type AuditRow } from '../../stores/sqlite/sqliteAudit';
import { processIo, type CliIo } from '../io';
import { parseOrExit, usageError, type CommandSpec } from '../options';
import { openLogOrExit } from '../logTarget';
import { foldGrants } from '../../stores/sqlite/sqliteGrantTree';
import { grantTree, grantTreeLines } from '../../domain/grantTree';

export const auditSpec: CommandSpec = {
  name: 'audit',
  summary: 'print the decisions of a SQLite or PostgreSQL log (filters, --json, --follow), or its grant tree (--tree)',
  usage: ['<log.sqlite | postgres://…[?schema=atc]> [--grant ID] [--tool NAME] [--rejected] [--since ISO|ms] [--json] [--follow [--interval ms] [--follow-max N]]', '<log.sqlite | postgres://…> --tree [--at ISO|ms] [--json]'],
  description: 'One line per decision: time, seq, grant, tool, decision, reject reason, and what became of an admitted call (completed, failed, timed out, cancelled, or in flight). Never a token or an argument value.',
  operands: { name: '<log>', min: 1, max: 1 },
  options: [
    { name: 'grant', value: 'ID', description: 'only the decisions on this grant' },
    { name: 'tool', value: 'NAME', description: 'only the decisions on this tool' },
    { name: 'rejected', description: 'only rejections' },
    { name: 'since', value: 'ISO|ms', description: 'only decisions at or after this time (ISO 8601 or ms since epoch)' },
    { name: 'json', description: 'print JSON Lines (one object per decision; with --tree, one JSON forest)' },
    { name: 'follow', description: 'keep printing decisions other processes append, until Ctrl-C' },
    { name: 'interval', value: 'ms', description: 'with --follow: how often to look (default 1000, at least 10)' },
    { name: 'follow-max', value: 'N', description: 'with --follow: stop after N rows' },
    { name: 'tree', description: 'print the grant tree (delegations, status, usage) instead of decisions' },
    { name: 'at', value: 'ISO|ms', description: 'with --tree: the time the status is given at (default now)' },
  ],
};
const intervalMsDefault = 1_000;

/** Waits `intervalMs` between polls; stops (resolves false) after SIGINT/SIGTERM. */
export function timerPoll(intervalMs: number): { wait: () => Promise<boolean>; dispose: () => void } {
  let stopped = false;
  let wake: ((more: boolean) => void) | undefined;
  const stop = (): void => {
    stopped = true;
    wake?.(false);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    wait: () =>
      stopped
        ? Promise.resolve(false)
        : new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(!stopped), intervalMs);
            wake = (more) => {
              clearTimeout(timer);
              resolve(more);
            };
          }),
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

function parseSince(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * `atc audit`: the decisions of a stored log as a table (or JSON Lines with --json), filtered; with
 * --follow, keeps polling for decisions other processes append. `poll` is injectable for tests.
 */
export async function runAudit(args: readonly string[], io: CliIo = processIo, poll?: () => Promise<boolean>): Promise<number> {
  const parsed = await parseOrExit(auditSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  if (parsed.flags.has('tree')) return runAuditTree(parsed.positional[0] as string, parsed.values.get('at'), parsed.flags.has('json'), io);
  const since = parsed.values.get('since');
  const sinceMs = since === undefined ? undefined : parseSince(since);
  const intervalMs = Number(parsed.values.get('interval') ?? intervalMsDefault);
  const followMax = parsed.values.has('follow-max') ? Number(parsed.values.get('follow-max')) : undefined;
  if (since !== undefined && sinceMs === undefined) return usageError(auditSpec, io, '--since needs an ISO 8601 time or ms since epoch');
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 10) return usageError(auditSpec, io, '--interval needs an integer of at least 10 (ms)');
  if (followMax !== undefined && (!Number.isSafeInteger(followMax) || followMax < 1)) return usageError(auditSpec, io, '--follow-max needs a positive integer');
  const filter: AuditFilter = {
    ...(parsed.values.has('grant') ? { grant: parsed.values.get('grant') as string } : {}),
    ...(parsed.values.has('tool') ? { tool: parsed.values.get('tool') as string } : {}),
    ...(parsed.flags.has('rejected') ? { rejectedOnly: true } : {}),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
  };

  const log = await openLogOrExit(parsed.positional[0] as string, 'audit', io);
  if (log === 2) return 2;
  const db = log.db;
  const json = parsed.flags.has('json');
  const emit = (row: AuditRow): void | Promise<void> => io.out(json ? JSON.stringify(row) : auditLine(row));
  const timer = poll === undefined && parsed.flags.has('follow') ? timerPoll(intervalMs) : undefined;
  const wait = !parsed.flags.has('follow') ? () => Promise.resolve(false) : (poll ?? (timer as { wait: () => Promise<boolean> }).wait);
  // A PostgreSQL log is read through its in-memory copy: copy what was appended before each look.
  const waitForMore = async (): Promise<boolean> => (await wait()) && (await log.sync()) >= 0;
  try {
    if (!json) await io.out(auditHeader());
    await followDecisions(new DecisionReader(db, filter), emit, waitForMore, followMax !== undefined ? { followRowsMax: followMax } : {});
    return 0;
  } finally {
    timer?.dispose();
    await log.close();
  }
}

/** `--tree`: the delegation forest of the log, status at `--at` (default now) and usage. */
async function runAuditTree(file: string, atText: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const at = atText === undefined ? Date.now() : parseSince(atText);
  if (at === undefined) return usageError(auditSpec, io, '--at needs an ISO 8601 time or ms since epoch');
  const log = await openLogOrExit(file, 'audit', io);
  if (log === 2) return 2;
  try {
    const { state, issued } = foldGrants(log.db);
    const forest = grantTree(state, issued, at);
    if (json) await io.out(JSON.stringify(forest));
    else for (const line of grantTreeLines(forest)) await io.out(line);
    return 0;
  } finally {
    await log.close();
  }
}

export const auditCommand: CliCommand = {
  summary: auditSpec.summary,
  spec: auditSpec,
  run: (args) => runAudit(args),
};
