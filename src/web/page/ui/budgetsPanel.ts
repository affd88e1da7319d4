import { leftText, type AuditModel, type PendingCall } from '../auditModel';
import { share, type Gauge } from '../gauges';
import type { AuditForest } from '../forest';
import { el, formatCount } from './dom';

/** Grant cards drawn at most; the grant filter shows any one of the rest. */
export const budgetCardsMax = 60;
/** Running calls listed per card (soonest deadline first); the rest are counted. */
export const pendingShownMax = 10;

/**
 * One card per grant with a gauge per budget field: the bar's solid part is settled use, its
 * hatched part the reservations of calls still running (in-flight), the text says both.
 */
export function drawBudgets(container: HTMLElement, model: AuditModel, forest: AuditForest, inFlight: ReadonlyMap<string, Record<string, unknown>>, grantFilter: string | undefined, now: number): void {
  const pending = model.pendingByGrant(now);
  const ids = [...model.grants.values()].sort((a, b) => b.issuedSeq - a.issuedSeq).map((g) => g.grantId).filter((id) => grantFilter === undefined || id === grantFilter);
  const cards = ids.slice(0, budgetCardsMax).map((id) => {
    const gauges = model.gauges(id, inFlight.get(id) ?? {}, now);
    const status = forest.status.get(id) ?? 'unplaced';
    return el('div', { class: `card ${status}`, 'data-grant': id }, el('div', { class: 'card-title' }, el('code', {}, id), el('span', { class: `badge ${status}` }, status.replace(/_/g, ' '))), ...gauges.map(gaugeElement), ...pendingElements(pending.get(id) ?? []));
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

/** The card's running calls, each with the time left until the ledger times it out. */
function pendingElements(calls: readonly PendingCall[]): HTMLElement[] {
  if (calls.length === 0) return [];
  const items = calls.slice(0, pendingShownMax).map((c) => {
    const left = c.leftMs === undefined ? 'no timeout' : c.leftMs === 0 ? 'due: timing out' : `${leftText(c.leftMs)} left`;
    const attrs: Record<string, string> = { 'data-call': c.callId };
    if (c.deadline !== undefined) attrs['data-deadline'] = String(c.deadline);
    if (c.leftMs !== undefined) attrs['data-left-ms'] = String(c.leftMs);
    return el('li', attrs, el('code', {}, c.tool), ' ', el('span', { class: 'left' }, left));
  });
  if (calls.length > pendingShownMax) items.push(el('li', { class: 'more' }, `and ${formatCount(calls.length - pendingShownMax)} more running`));
  return [el('ul', { class: 'pending', 'aria-label': 'running calls' }, ...items)];
}
