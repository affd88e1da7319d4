/** Makes an element with text content only: log data is hostile and never becomes markup. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '-' : d.toISOString().replace('T', ' ').replace('Z', '');
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
