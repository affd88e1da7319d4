import { dropAtcMeta } from '../upstreamMeta';

/** A result from an upstream with its `_meta` keys under `atc/` dropped (the rest as it came). */
export function withoutAtcMeta<T extends object>(result: T): T {
  if (!('_meta' in result)) return result;
  const { _meta, ...rest } = result as T & { readonly _meta?: unknown };
  const kept = dropAtcMeta(_meta);
  return (kept === undefined ? rest : { ...rest, _meta: kept }) as T;
}
