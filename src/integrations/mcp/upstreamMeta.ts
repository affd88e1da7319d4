/**
 * `_meta` keys under `atc/` are the ledger's word (`atc/reason`, `atc/callId`, …): a client reads
 * `atc/reason` as a ledger rejection. An upstream writing them could make an admitted call look
 * refused (or carry another call's id), so they are dropped from whatever an upstream returns before
 * the proxy (or the gateway) adds its own. The prefix is compared without case, so `ATC/reason`
 * cannot pass for it with a lenient client.
 */
export function isLedgerMetaKey(key: string): boolean {
  return key.length >= 4 && key.slice(0, 4).toLowerCase() === 'atc/';
}

/**
 * An upstream result without the `atc/` keys of its `_meta` (a copy; other keys kept). A `_meta`
 * that is not a plain object is dropped whole; a result that is not an object is returned as it is.
 */
export function withoutLedgerMeta<T>(result: T): T {
  if (typeof result !== 'object' || result === null || !Object.prototype.hasOwnProperty.call(result, '_meta')) return result;
  const { _meta: meta, ...rest } = result as T & { readonly _meta?: unknown };
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return rest as T;
  // fromEntries defines own data properties, so a `__proto__` key stays a key.
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !isLedgerMetaKey(key)));
  return { ...rest, _meta: kept } as T;
}

/**
 * An upstream's `_meta` without its `atc/` keys, as the relay uses it: undefined when nothing is
 * left or when it is not a plain object (so a result carries no empty `_meta`).
 */
export function dropAtcMeta(meta: unknown): Record<string, unknown> | undefined {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !isLedgerMetaKey(key)));
  return Object.keys(kept).length > 0 ? kept : undefined;
}
