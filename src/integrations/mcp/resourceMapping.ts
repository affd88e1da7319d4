import type { JsonObject } from '../../domain/json';
import type { ResourceTemplates } from '../../domain/events';
import { templateResources, type TemplateResolvers } from './resourceTemplates';
import { realResolvers } from './resolvers';

/**
 * The resources a proxied call names, from the grant's recorded templates. Tools are registered
 * before the grant is known (issuing needs them in the log), so the templates are set afterwards;
 * until then every call fails closed (`invalid_resource`).
 */
export class ResourceMapping {
  private templates: ResourceTemplates | undefined;
  private fsBase: string | undefined;

  constructor(private readonly resolvers: TemplateResolvers = realResolvers) {}

  use(templates: ResourceTemplates, fsBase: string | undefined): void {
    this.templates = templates;
    this.fsBase = fsBase;
  }

  /** A tool without templates names no resource; the ledger then checks only tools and arguments. */
  resources(tool: string, args: JsonObject): string[] {
    if (this.templates === undefined) throw new Error('no grant templates in use yet');
    const own = Object.prototype.hasOwnProperty.call(this.templates, tool) ? this.templates[tool] : undefined;
    return own === undefined ? [] : templateResources(own, args, this.fsBase, this.resolvers);
  }
}
