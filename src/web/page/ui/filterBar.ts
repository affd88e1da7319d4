import type { AuditModel } from '../auditModel';
import { filterFromQuery, queryFromFilter, type DecisionFilter } from '../filters';
import { byId, el } from './dom';

const fields = ['grant', 'tool', 'decision', 'reason'] as const;

/** The four filter selects, kept in step with the URL's query (so a filtered view can be shared). */
export class FilterBar {
  private readonly selects: Record<(typeof fields)[number], HTMLSelectElement>;
  private known = { grant: 0, tool: 0, reason: 0 };

  constructor(private readonly model: AuditModel, private readonly onChange: (filter: DecisionFilter) => void) {
    this.selects = { grant: byId('f-grant'), tool: byId('f-tool'), decision: byId('f-decision'), reason: byId('f-reason') };
    for (const field of fields) this.selects[field].addEventListener('change', () => this.changed());
    byId('f-clear').addEventListener('click', () => this.apply({}));
    window.addEventListener('popstate', () => this.apply(filterFromQuery(location.search), false));
  }

  current(): DecisionFilter {
    return filterFromQuery(location.search);
  }

  /** Sets the selects (adding an option for a value the log has not shown yet) and the URL. */
  apply(filter: DecisionFilter, push = true): void {
    for (const field of fields) {
      const value = filter[field] ?? '';
      const select = this.selects[field];
      if (value !== '' && ![...select.options].some((o) => o.value === value)) select.append(el('option', { value }, value));
      select.value = value;
    }
    const query = queryFromFilter(filter);
    if (push && query !== location.search) history.pushState(null, '', `${location.pathname}${query}`);
    this.onChange(filter);
  }

  /** Adds options for grants, tools and reasons seen since the last call. */
  refreshOptions(): void {
    this.addOptions('grant', [...this.model.grants.keys()]);
    this.addOptions('tool', [...this.model.tools]);
    this.addOptions('reason', [...this.model.reasons]);
  }

  private addOptions(field: 'grant' | 'tool' | 'reason', values: string[]): void {
    if (values.length === this.known[field]) return;
    this.known[field] = values.length;
    const select = this.selects[field];
    const have = new Set([...select.options].map((o) => o.value));
    for (const value of values.sort()) if (!have.has(value)) select.append(el('option', { value }, value));
  }

  private changed(): void {
    const filter: { -readonly [K in keyof DecisionFilter]: string } = {};
    for (const field of fields) if (this.selects[field].value !== '') filter[field] = this.selects[field].value;
    this.apply(filterFromQuery(queryFromFilter(filter as DecisionFilter)));
  }
}
