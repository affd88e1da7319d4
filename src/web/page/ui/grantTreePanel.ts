import type { AuditModel } from '../auditModel';
import { subtreeIds, type GrantNode } from '../grantTree';
import { el, formatCount } from './dom';

/** Tree nodes drawn at most (a log with many grants shows the first ones; the filter finds others). */
export const treeNodesMax = 500;

/**
 * The delegation forest: each grant with its status (a revoked subtree is marked from the revoked
 * grant down) and its usage, which the core's fold already rolls up from descendants; the count of
 * calls still running in the subtree is added here. Clicking a grant filters the page by it.
 */
export function drawGrantTree(container: HTMLElement, model: AuditModel, forest: readonly GrantNode[], inFlight: ReadonlyMap<string, Record<string, unknown>>, onPick: (grantId: string) => void): void {
  let drawn = 0;
  const item = (node: GrantNode): HTMLElement | undefined => {
    if (drawn++ >= treeNodesMax) return undefined;
    const running = subtreeIds(node).reduce((sum, id) => sum + ((inFlight.get(id)?.calls as number | undefined) ?? 0), 0);
    const calls = model.gauges(node.grantId, {}).find((g) => g.key === 'calls');
    const usage = calls === undefined ? '' : `${formatCount(calls.used)} / ${formatCount(calls.limit)} calls`;
    const button = el('button', { type: 'button', class: 'grant-link', title: 'filter by this grant' }, node.grantId);
    button.addEventListener('click', () => onPick(node.grantId));
    const children = node.children.map(item).filter((c): c is HTMLElement => c !== undefined);
    return el(
      'li',
      { class: `node ${node.status}`, 'data-grant': node.grantId, 'data-status': node.status },
      el('div', { class: 'node-line' }, button, el('span', { class: `badge ${node.status}` }, node.status.replace(/_/g, ' ')), el('span', { class: 'usage' }, usage), running > 0 ? el('span', { class: 'running' }, `${running} running`) : ''),
      ...(children.length > 0 ? [el('ul', {}, ...children)] : []),
    );
  };
  const items = forest.map(item).filter((c): c is HTMLElement => c !== undefined);
  const total = model.grants.size;
  container.replaceChildren(items.length === 0 ? el('p', { class: 'more' }, 'no grants in the log yet') : el('ul', { class: 'tree' }, ...items), ...(total > treeNodesMax ? [el('p', { class: 'more' }, `${formatCount(total - treeNodesMax)} more grants not drawn`)] : []));
}
