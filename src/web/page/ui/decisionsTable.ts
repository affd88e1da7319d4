import type { AuditModel, DecisionRow } from '../auditModel';
import { matchesFilter, type DecisionFilter } from '../filters';
import { el, formatTime } from './dom';

export const rowHeightPx = 24;
/** Rows drawn above and below the visible ones, so fast scrolling shows no gaps. */
const overscanRows = 10;

const columns = ['seq', 'time', 'grant', 'tool', 'decision', 'reason', 'bytes', 'outcome'] as const;

/**
 * A virtualized table: only the rows in view are in the DOM (a pool of row elements moved and
 * refilled on scroll), so 100,000 decisions scroll like 100. It sticks to the tail while scrolled
 * to the bottom, as a live log should.
 */
export class DecisionsTable {
  private filtered: number[] = [];
  private filter: DecisionFilter = {};
  private scanned = 0;
  private readonly spacer: HTMLDivElement;
  private readonly pool: HTMLDivElement[] = [];
  private follow = true;

  constructor(private readonly scroller: HTMLElement, private readonly model: AuditModel) {
    this.spacer = el('div', { class: 'spacer' });
    scroller.append(this.spacer);
    scroller.addEventListener('scroll', () => {
      this.follow = scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - rowHeightPx;
      this.draw();
    });
  }

  setFilter(filter: DecisionFilter): void {
    this.filter = filter;
    this.filtered = [];
    this.scanned = 0;
    this.follow = true;
    this.update();
  }

  /** The rows the filter lets through, in log order (for the export). */
  filteredRows(): DecisionRow[] {
    return this.filtered.map((i) => this.model.decisions[i] as DecisionRow);
  }

  count(): number {
    return this.filtered.length;
  }

  /** Takes in decisions added since the last call, then redraws. */
  update(): void {
    const rows = this.model.decisions;
    for (; this.scanned < rows.length; this.scanned++) if (matchesFilter(rows[this.scanned] as DecisionRow, this.filter)) this.filtered.push(this.scanned);
    this.spacer.style.height = `${this.filtered.length * rowHeightPx}px`;
    if (this.follow) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.draw();
  }

  private draw(): void {
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / rowHeightPx) - overscanRows);
    const visible = Math.ceil(this.scroller.clientHeight / rowHeightPx) + 2 * overscanRows;
    const last = Math.min(this.filtered.length, first + visible);
    while (this.pool.length < last - first) {
      const row = el('div', { class: 'row', role: 'row' }, ...columns.map((c) => el('span', { class: `c-${c}`, role: 'cell' })));
      this.pool.push(row);
      this.spacer.append(row);
    }
    this.pool.forEach((row, k) => {
      const index = first + k;
      if (index >= last) {
        row.hidden = true;
        return;
      }
      row.hidden = false;
      row.style.transform = `translateY(${index * rowHeightPx}px)`;
      this.fill(row, this.model.decisions[this.filtered[index] as number] as DecisionRow);
    });
  }

  private fill(row: HTMLDivElement, d: DecisionRow): void {
    const outcome = this.model.outcomeOf(d);
    const cells = [String(d.seq), formatTime(d.at), d.grantId ?? '-', d.tool ?? '-', d.decision, d.reason ?? '', d.bytes === null ? '' : String(d.bytes), outcome ?? ''];
    row.className = `row ${d.decision}`;
    row.dataset.seq = String(d.seq);
    cells.forEach((text, i) => {
      const cell = row.children[i] as HTMLElement;
      if (cell.textContent !== text) cell.textContent = text;
    });
  }
}
