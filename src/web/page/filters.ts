/** What the decisions table shows; every field set narrows it (AND). Kept in the page's URL. */
export interface DecisionFilter {
  readonly grant?: string;
  readonly tool?: string;
  readonly decision?: 'admitted' | 'rejected' | 'asked';
  readonly reason?: string;
}

export interface FilterableRow {
  readonly grantId: string | null;
  readonly tool: string | null;
  readonly decision: 'admitted' | 'rejected' | 'asked';
  readonly reason: string | null;
}

const keys = ['grant', 'tool', 'decision', 'reason'] as const;
/** A filter value longer than this is not one anyone typed: ignored. */
const filterCharsMax = 256;

export function filterFromQuery(query: string): DecisionFilter {
  const params = new URLSearchParams(query);
  const filter: { -readonly [K in keyof DecisionFilter]: DecisionFilter[K] } = {};
  for (const key of keys) {
    const value = params.get(key);
    if (value === null || value === '' || value.length > filterCharsMax) continue;
    if (key === 'decision') {
      if (value === 'admitted' || value === 'rejected' || value === 'asked') filter.decision = value;
    } else filter[key] = value;
  }
  return filter;
}

/** The query string (with `?`, or '' when nothing is filtered), keys in a fixed order. */
export function queryFromFilter(filter: DecisionFilter): string {
  const params = new URLSearchParams();
  for (const key of keys) {
    const value = filter[key];
    if (value !== undefined) params.set(key, value);
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function matchesFilter(row: FilterableRow, filter: DecisionFilter): boolean {
  return (
    (filter.grant === undefined || row.grantId === filter.grant) &&
    (filter.tool === undefined || row.tool === filter.tool) &&
    (filter.decision === undefined || row.decision === filter.decision) &&
    (filter.reason === undefined || row.reason === filter.reason)
  );
}
