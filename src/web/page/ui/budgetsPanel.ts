import type { AuditModel } from '../auditModel';
import { share, type Gauge } from '../gauges';
import type { AuditForest } from '../forest';
import { el, formatCount } from './dom';

/** Grant cards drawn at most; the grant filter shows any one of the rest. */
export const budgetCardsMax = 60;

/**
 * One card per grant with a gauge per budget field: the bar's solid part is settled use, its
 * hatched part the reservations of calls still running (in-flight), the text says both.
 */
export function drawBudgets(container: HTMLElement, model: AuditModel, forest: AuditForest, inFlight: ReadonlyMap<string, Record<string, unknown>>, grantFilter: string | undefined, now: number): void {
  const ids = [...model.grants.values()].sort((a, b) => b.issuedSeq - a.issuedSeq).map((g) => g.grantId).filter((id) => grantFilter === undefined || id === grantFilter);
  const cards = ids.slice(0, budgetCardsMax).map((id) => {
    const gauges = model.gauges(id, inFlight.get(id) ?? {}, now);
    const status = forest.status.get(id) ?? 'unplaced';
    return el('div', { class: `card ${status}`, 'data-grant': id }, el('div', { class: 'card-title' }, el('code', {}, id), el('span', { class: `badge ${status}` }, status.replace(/_/g, ' '))), ...gauges.map(gaugeElement));
  });
  if (ids.length > budgetCardsMax) cards.push(el('p', { class: 'more' }, `and ${formatCount(ids.length - budgetCardsMax)} more grants: pick one in the grant filter`));
  if (ids.length === 0) cards.push(el('p', { class: 'more' }, 'no grants in the log yet'));
  container.replaceChildren(...cards);
}

function gaugeElement(g: Gauge): HTMLElement {
  const settled = Math.max(0, g.used - g.inFlight);
  const bar = el('div', { class: 'bar', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(g.limit), 'aria-valuenow': String(g.used), 'aria-label': g.label });
  const used = el('div', { class: 'used' });
  const held = el('div', { class: 'inflight' });
  used.style.width = `${share(settled, g.limit) * 100}%`;
  held.style.width = `${Math.max(0, share(g.used, g.limit) - share(settled, g.limit)) * 100}%`;
  bar.append(used, held);
  const text = `${formatCount(g.used)} / ${formatCount(g.limit)}${g.inFlight > 0 ? ` (${formatCount(g.inFlight)} in flight)` : ''}`;
  return el('div', { class: 'gauge', 'data-gauge': g.key, 'data-used': String(g.used), 'data-limit': String(g.limit), 'data-inflight': String(g.inFlight) }, el('span', { class: 'g-label' }, g.label), bar, el('span', { class: 'g-text' }, text));
}
