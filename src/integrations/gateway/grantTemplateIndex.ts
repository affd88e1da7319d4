import type { Subscription } from 'rxjs';
import type { LedgerEvent, ResourceTemplates } from '../../domain/events';
import type { JsonObject } from '../../domain/json';
import type { Ledger, ResourceCall } from '../../stream/types';
import { templateResources, type TemplateResolvers } from '../mcp/resourceTemplates';
import { realResolvers } from '../mcp/resolvers';
import type { ResourceMapper } from '../mcp/upstreamTools';

interface Recorded {
  readonly templates: ResourceTemplates;
  readonly fsBase: string | undefined;
}

/**
 * The resource templates each root grant recorded (its policy's), for every grant the gateway acts
 * for: sessions of different grants share the tools but not the templates. Read from the log once
 * at start, then kept current from `events$` (which also carries other processes' events), so a
 * call's mapping never reads the store inside the ledger's serialized step. A child maps as its
 * root; a grant recorded without templates maps every call to no resource (as in `atc proxy`).
 */
export class GrantTemplateIndex implements ResourceMapper {
  private readonly byRoot = new Map<string, Recorded>();
  private readonly subscription: Subscription;

  constructor(ledger: Ledger, private readonly resolvers: TemplateResolvers = realResolvers) {
    for (const event of ledger.events()) this.add(event);
    this.subscription = ledger.events$.subscribe((event) => this.add(event));
  }

  resources(tool: string, args: JsonObject, call: ResourceCall): string[] {
    const recorded = this.byRoot.get(call.rootGrantId);
    const own = recorded !== undefined && Object.prototype.hasOwnProperty.call(recorded.templates, tool) ? recorded.templates[tool] : undefined;
    return own === undefined ? [] : templateResources(own, args, recorded?.fsBase, this.resolvers);
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  private add(event: LedgerEvent): void {
    if (event.type !== 'grant.issued' || event.parentGrantId !== undefined || event.resourceTemplates === undefined) return;
    this.byRoot.set(event.grantId, { templates: event.resourceTemplates, fsBase: event.fsBase });
  }
}
