import type Database from 'better-sqlite3';

/** `by` is host text: shown without control characters (a terminal escape in a name is not run). */
const printableText = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');

/** Which decisions an audit shows. All filters combine with AND. */
export interface AuditFilter {
  readonly grant?: string;
  readonly tool?: string;
  /** Only `call.rejected`. */
  readonly rejectedOnly?: boolean;
  /** Only decisions at or after this time (ms since epoch). */
  readonly sinceMs?: number;
}

/** What became of an admitted call: its settlement event, read from the log. */
export type AuditOutcome = 'completed' | 'failed' | 'timed out' | 'cancelled' | 'in flight';

/** How a call that waited for a person ended its wait (docs/approvals.md). */
export type AuditApproval = 'pending' | 'approved' | 'denied' | 'timed out' | 'revoked';

/** One decision as the audit prints it. */
export interface AuditRow {
  readonly time: string;
  readonly seq: number;
  readonly grant: string | null;
  readonly tool: string | null;
  /** `asked`: the call passed every check and waited for a person (`approval.requested`). */
  readonly decision: 'admitted' | 'rejected' | 'replayed' | 'asked';
  readonly reason: string | null;
  /** Only on an admitted call: how it was settled, or `in flight` while it is not (yet). */
  readonly outcome?: AuditOutcome;
  readonly bytes: number | null;
  /** Only on an `asked` row: how the wait ended, and who decided (approved or denied). */
  readonly approval?: AuditApproval;
  readonly by?: string;
  /** Only on a call that reserved meters (admitted) or whose cost was evaluated (rejected): the tool's cost per meter. */
  readonly meters?: { readonly [meter: string]: number };
  /** Only on `meter_budget_exhausted`: the meter that could not cover the call. */
  readonly meter?: string;
  /** Only on `rate_limited`. */
  readonly retryAfterMs?: number;
}

interface DecisionColumns {
  seq: number;
  at: number;
  type: string;
  grant_id: string | null;
  tool: string | null;
  reason: string | null;
  input_bytes: number | null;
  meters: string | null;
  meter: string | null;
  retry_after_ms: number | null;
  settled: string | null;
  resolved: string | null;
  released: number | null;
}

/** Rows read per query, so neither a long log nor a long follow holds much in memory. */
export const auditPageRowsMax = 1_000;

/**
 * Reads decisions from the indexed columns (fast, filterable in SQL). The columns are copies of the
 * canonical bodies; `atc verify` checks that they agree.
 */
export class DecisionReader {
  private readonly page: Database.Statement;
  private readonly head: Database.Statement;
  private readonly params: { readonly grant?: string | undefined; readonly tool?: string | undefined; readonly since?: number | undefined };

  constructor(db: Database.Database, filter: AuditFilter) {
    const where = ['seq > @after', 'seq <= @upTo', filter.rejectedOnly === true ? "type = 'call.rejected'" : "type IN ('call.admitted', 'call.rejected', 'call.replayed', 'approval.requested')"];
    if (filter.grant !== undefined) where.push('grant_id = @grant');
    if (filter.tool !== undefined) where.push('tool = @tool');
    if (filter.sinceMs !== undefined) where.push('at >= @since');
    // Budget details (issue 12) from the canonical body: rare, and not worth a column of their own.
    const details = "json_extract(body, CASE WHEN type IN ('call.admitted', 'approval.requested') THEN '$.reserved.meters' ELSE '$.cost' END) AS meters, json_extract(body, '$.meter') AS meter, json_extract(body, '$.retryAfterMs') AS retry_after_ms";
    // An admitted call's settlement comes later on the same grant: the (grant_id, seq) index finds it.
    const settled =
      "CASE WHEN e.type IN ('call.admitted', 'approval.requested') THEN (SELECT s.type || CASE WHEN json_extract(s.body, '$.timedOut') THEN ':timedOut' WHEN json_extract(s.body, '$.cancelled') THEN ':cancelled' ELSE '' END FROM events s WHERE s.grant_id = e.grant_id AND s.seq > e.seq AND s.call_id = e.call_id AND s.type IN ('call.completed', 'call.failed') ORDER BY s.seq LIMIT 1) END AS settled";
    // A wait's end: its resolution (same grant and call, later), or a revocation of its grant or an ancestor.
    const resolved =
      "CASE WHEN e.type = 'approval.requested' THEN (SELECT json_extract(s.body, '$.outcome') || ':' || coalesce(json_extract(s.body, '$.by'), '') FROM events s WHERE s.grant_id = e.grant_id AND s.seq > e.seq AND s.call_id = e.call_id AND s.type = 'approval.resolved' ORDER BY s.seq LIMIT 1) END AS resolved";
    const released =
      "CASE WHEN e.type = 'approval.requested' THEN (SELECT min(r.seq) FROM events r WHERE r.type = 'grant.revoked' AND r.seq > e.seq AND (r.grant_id = e.grant_id OR instr(coalesce(json_extract(e.body, '$.ancestors'), ''), '\"' || r.grant_id || '\"') > 0)) END AS released";
    this.page = db.prepare(`SELECT seq, at, type, grant_id, tool, reason, input_bytes, ${details}, ${settled}, ${resolved}, ${released} FROM events e WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${auditPageRowsMax}`);
    this.head = db.prepare('SELECT coalesce(max(seq), 0) FROM events').pluck();
    this.params = { grant: filter.grant, tool: filter.tool, since: filter.sinceMs };
  }

  /** The log's current head seq: rows up to it are committed and never change. */
  headSeq(): number {
    return this.head.get() as number;
  }

  /** Matching decisions with `after < seq <= upTo`, one page at a time, in log order. */
  *between(after: number, upTo: number): Generator<AuditRow> {
    let from = after;
    for (;;) {
      const rows = this.page.all(this.bound(from, upTo)) as DecisionColumns[];
      for (const row of rows) yield toAuditRow(row);
      if (rows.length < auditPageRowsMax) return;
      from = (rows.at(-1) as DecisionColumns).seq;
    }
  }

  private bound(after: number, upTo: number): Record<string, unknown> {
    const bound: Record<string, unknown> = { after, upTo };
    for (const [key, value] of Object.entries(this.params)) if (value !== undefined) bound[key] = value;
    return bound;
  }
}

function toAuditRow(row: DecisionColumns): AuditRow {
  return {
    time: new Date(row.at).toISOString(),
    seq: row.seq,
    grant: row.grant_id,
    tool: row.tool,
    decision: row.type === 'call.admitted' ? 'admitted' : row.type === 'call.replayed' ? 'replayed' : row.type === 'approval.requested' ? 'asked' : 'rejected',
    reason: row.reason,
    ...(row.type === 'call.admitted' ? { outcome: outcomeOf(row.settled) } : {}),
    ...(row.type === 'approval.requested' ? approvalOf(row) : {}),
    bytes: row.input_bytes,
    ...(typeof row.meters === 'string' ? { meters: JSON.parse(row.meters) as { [meter: string]: number } } : {}),
    ...(typeof row.meter === 'string' ? { meter: row.meter } : {}),
    ...(typeof row.retry_after_ms === 'number' ? { retryAfterMs: row.retry_after_ms } : {}),
  };
}

function outcomeOf(settled: string | null): AuditOutcome {
  if (settled === null) return 'in flight';
  if (settled === 'call.completed') return 'completed';
  return settled.endsWith(':timedOut') ? 'timed out' : settled.endsWith(':cancelled') ? 'cancelled' : 'failed';
}

/** How a wait ended (and, once approved, how its call did). */
function approvalOf(row: DecisionColumns): { approval: AuditApproval; by?: string; outcome?: AuditOutcome } {
  if (row.resolved === null) return { approval: row.released === null ? 'pending' : 'revoked' };
  const cut = row.resolved.indexOf(':');
  const outcome = row.resolved.slice(0, cut);
  const by = row.resolved.slice(cut + 1);
  const approval: AuditApproval = outcome === 'approved' ? 'approved' : outcome === 'denied' ? 'denied' : 'timed out';
  return { approval, ...(by !== '' ? { by } : {}), ...(approval === 'approved' ? { outcome: outcomeOf(row.settled) } : {}) };
}

/** The budget details of a row as text after its columns: the cost per meter, the meter refused, the wait. */
function detail(row: AuditRow): string {
  const parts: string[] = [];
  if (row.meters !== undefined) parts.push(`cost ${Object.entries(row.meters).map(([m, n]) => `${m}=${n}`).join(',')}`);
  if (row.meter !== undefined) parts.push(`meter ${row.meter}`);
  if (row.retryAfterMs !== undefined) parts.push(`retry after ${row.retryAfterMs} ms`);
  if (row.approval !== undefined) parts.push(`approval ${row.approval}${row.by !== undefined ? ` by ${printableText(row.by)}` : ''}`);
  return parts.join('  ');
}

/**
 * Prints the decisions up to the current head, then, while `waitForMore()` resolves true, those
 * appended since (by this or any other process). `waitForMore` is the poll trigger: a timer in the
 * CLI, an explicit step in tests. Resolves with the number of rows emitted after the first pass.
 */
export async function followDecisions(
  reader: DecisionReader,
  emit: (row: AuditRow) => void | Promise<void>,
  waitForMore: () => Promise<boolean>,
  options: { readonly followRowsMax?: number } = {},
): Promise<number> {
  const followRowsMax = options.followRowsMax ?? Number.POSITIVE_INFINITY;
  let seen = reader.headSeq();
  for (const row of reader.between(0, seen)) await emit(row);
  let followed = 0;
  while (followed < followRowsMax && (await waitForMore())) {
    const head = reader.headSeq();
    for (const row of reader.between(seen, head)) {
      await emit(row);
      if (++followed >= followRowsMax) return followed;
    }
    seen = head;
  }
  return followed;
}

const columns = [
  { title: 'time', width: 24, value: (r: AuditRow) => r.time },
  { title: 'seq', width: 9, value: (r: AuditRow) => String(r.seq), right: true },
  { title: 'grant', width: 34, value: (r: AuditRow) => r.grant ?? '-' },
  { title: 'tool', width: 20, value: (r: AuditRow) => r.tool ?? '-' },
  { title: 'decision', width: 8, value: (r: AuditRow) => r.decision },
  { title: 'reason', width: 22, value: (r: AuditRow) => r.reason ?? '-' },
  { title: 'outcome', width: 9, value: (r: AuditRow) => r.outcome ?? '-' },
  { title: 'bytes', width: 9, value: (r: AuditRow) => (r.bytes === null ? '-' : String(r.bytes)), right: true },
] as const;

/** Fixed widths, so rows streamed by --follow line up with the header printed first. */
export function auditHeader(): string {
  return columns.map((c) => ('right' in c ? c.title.padStart(c.width) : c.title.padEnd(c.width))).join('  ').trimEnd();
}

export function auditLine(row: AuditRow): string {
  const line = columns.map((c) => ('right' in c ? c.value(row).padStart(c.width) : c.value(row).padEnd(c.width))).join('  ').trimEnd();
  const extra = detail(row);
  return extra === '' ? line : `${line}  ${extra}`;
}
