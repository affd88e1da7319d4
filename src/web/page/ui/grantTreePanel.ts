import type { GrantTreeNode } from '../../../domain/grantTree';
import type { AuditModel } from '../auditModel';
import { subtreeIds, type AuditForest } from '../forest';
import { el, formatCount } from './dom';

/** Tree nodes drawn at most (a log with many grants shows the first ones; the filter finds others). */
export const treeNodesMax = 500;

/**
 * The delegation forest: each grant with its effective status (a revoked subtree is marked from the
 * revoked grant down), its calls used of its limit (the core's fold already counts descendants'
 * use in an ancestor's) and how many calls are running in its subtree. Clicking a grant filters by it.
 */
export function drawGrantTree(container: HTMLElement, model: AuditModel, forest: AuditForest, inFlight: ReadonlyMap<string, Record<string, unknown>>, onPick: (grantId: string) => void): void {
  let drawn = 0;
  const line = (grantId: string, status: string, usage: string, running: number): HTMLElement => {
    const button = el('button', { type: 'button', class: 'grant-link', title: 'filter by this grant' }, grantId);
    button.addEventListener('click', () => onPick(grantId));
    return el('div', { class: 'node-line' }, button, el('span', { class: `badge ${status}` }, status.replace(/_/g, ' ')), el('span', { class: 'usage' }, usage), running > 0 ? el('span', { class: 'running' }, `${running} running`) : '');
  };
  const item = (node: GrantTreeNode): HTMLElement | undefined => {
    if (drawn++ >= treeNodesMax) return undefined;
    const status = forest.status.get(node.grantId) ?? node.status;
    const running = subtreeIds(node).reduce((sum, id) => sum + ((inFlight.get(id)?.calls as number | undefined) ?? 0), 0);
    const { calls } = node.usage;
    const children = node.children.map(item).filter((c): c is HTMLElement => c !== undefined);
    return el(
      'li',
      { class: `node ${status}`, 'data-grant': node.grantId, 'data-status': status },
      line(node.grantId, status, `${formatCount(calls.used)} / ${formatCount(calls.limit)} calls`, running),
      ...(children.length > 0 ? [el('ul', {}, ...children)] : []),
    );
  };
  const items = forest.roots.map(item).filter((c): c is HTMLElement => c !== undefined);
  const parts: HTMLElement[] = [items.length === 0 && forest.unplaced.length === 0 ? el('p', { class: 'more' }, 'no grants in the log yet') : el('ul', { class: 'tree' }, ...items)];
  if (drawn > treeNodesMax) parts.push(el('p', { class: 'more' }, `${formatCount(model.grants.size - treeNodesMax)} more grants not drawn`));
  if (forest.unplaced.length > 0) {
    parts.push(
      el('p', { class: 'more bad' }, `${forest.unplaced.length} grants the tree cannot place (a parent missing from the log: the log does not verify):`),
      el('ul', { class: 'tree' }, ...forest.unplaced.slice(0, treeNodesMax).map((id) => el('li', { class: 'node unplaced', 'data-grant': id, 'data-status': 'unplaced' }, line(id, 'unplaced', '', 0)))),
    );
  }
  container.replaceChildren(...parts);
}
