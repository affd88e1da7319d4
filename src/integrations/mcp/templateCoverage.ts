import type { ResourceTemplates } from '../../domain/events';

// Scopes of these schemes name real objects (files, URLs): only a template maps a call onto them.
const realSchemes = ['fs:', 'http:', 'https:'] as const;

/**
 * A proxied tool names resources only through its templates, so a tool without any names none and
 * passes every scope: with `fs:/srv/project/` granted, `read_file` without a template would still
 * forward `/etc/passwd`. So when a grant's scopes (its own or an ancestor's) name files or URLs,
 * every granted tool must have templates or be declared resource-free with an empty list
 * (`"resources": { "get_time": [] }`). Says what is wrong, naming the first tool, or undefined.
 */
export function templateCoverageProblem(tools: readonly string[], scopes: readonly string[], templates: ResourceTemplates): string | undefined {
  const real = scopes.find((scope) => realSchemes.some((scheme) => scope.startsWith(scheme)));
  if (real === undefined) return undefined;
  const bare = tools.find((tool) => !Object.prototype.hasOwnProperty.call(templates, tool));
  if (bare === undefined) return undefined;
  const scheme = real.slice(0, real.indexOf(':') + 1);
  return `tool ${bare} has no resource template, so its calls would pass the grant's ${scheme} scopes unchecked: give it templates (e.g. "${bare}": ["fs:{path}"]) or declare it resource-free ("${bare}": [])`;
}
