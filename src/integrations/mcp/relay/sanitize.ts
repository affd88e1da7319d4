import { dropAtcMeta } from '../upstreamMeta';

/** A result from an upstream with its `_meta` keys under `atc/` dropped (the rest as it came). */
export function withoutAtcMeta<T extends { readonly _meta?: unknown }>(result: T): T {
  if (result._meta === undefined) return result;
  const { _meta, ...rest } = result;
  const kept = dropAtcMeta(_meta);
  return (kept === undefined ? rest : { ...rest, _meta: kept }) as T;
}
