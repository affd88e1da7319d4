import type { LedgerEvent, ResourceTemplates } from '../../domain/events';

export interface GrantTemplates {
  readonly templates: ResourceTemplates;
  readonly fsBase: string | undefined;
}

/**
 * The resource templates recorded for a grant: those of its root grant (a delegated child, whose
 * `grant.issued` names a `parentGrantId`, inherits its root's). A grant recorded without templates
 * maps every call to no resource.
 */
export function grantTemplates(events: readonly LedgerEvent[], grantId: string): GrantTemplates {
  const issued = new Map<string, Extract<LedgerEvent, { type: 'grant.issued' }>>();
  for (const event of events) if (event.type === 'grant.issued') issued.set(event.grantId, event);
  let current = issued.get(grantId);
  for (let depth = 0; current !== undefined && depth < 1_000; depth++) {
    const parent = (current as { readonly parentGrantId?: unknown }).parentGrantId;
    if (typeof parent !== 'string' || !issued.has(parent)) break;
    current = issued.get(parent);
  }
  return { templates: current?.resourceTemplates ?? {}, fsBase: current?.fsBase };
}
