import type { PolicyProblem } from './checkPolicy';
import { pointer } from './pointer';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Granted tools with no `resources` entry while the policy's scopes name files or URLs: through
 * the proxy such a tool names no resource, so those scopes bind none of its calls. An explicit
 * empty list (`"get_time": []`) declares a tool resource-free. Read from the plain JSON value, before
 * (and whether or not) the policy parses, since a stricter `parsePolicy` may refuse exactly this.
 */
export function unboundTools(value: unknown): PolicyProblem[] {
  if (!isObject(value) || !Array.isArray(value.tools) || !Array.isArray(value.scopes)) return [];
  if (!value.scopes.some((s) => typeof s === 'string' && /^(fs|https?):/.test(s))) return [];
  const templates = isObject(value.resources) ? value.resources : {};
  return value.tools.flatMap((tool: unknown, i) =>
    typeof tool === 'string' && !Object.prototype.hasOwnProperty.call(templates, tool)
      ? [{ pointer: pointer('tools', i), code: 'unbound_tool' as const, message: `${JSON.stringify(tool)} has no resource template, so the policy's fs:/url: scopes bind none of its calls: give it templates, or declare it resource-free with an empty list ("resources": { ${JSON.stringify(tool)}: [] })` }]
      : [],
  );
}
