import type { JsonObject } from '../domain/json';
import type { LedgerState } from '../domain/state';
import { undeclaredNarrowedProperty } from '../tools/declaredProperties';

/** The registered inputSchema of a tool, or undefined (an unknown tool is refused elsewhere, by name). */
export function inputSchemaOf(state: LedgerState, tool: string): JsonObject | undefined {
  return Object.prototype.hasOwnProperty.call(state.tools, tool) ? state.tools[tool]?.inputSchema : undefined;
}

/**
 * What is wrong with a narrowing that constrains a property its tool does not declare (it would
 * constrain nothing), naming the tool and the property; undefined when every name is declared.
 * The names are the narrowing author's own (the host's, or the agent's in its attenuation request).
 */
export function undeclaredNarrowingProblem(inputSchema: JsonObject | undefined, tool: string, narrowing: JsonObject): string | undefined {
  if (inputSchema === undefined) return undefined;
  const name = undeclaredNarrowedProperty(inputSchema, narrowing);
  if (name === undefined) return undefined;
  return `args[${JSON.stringify(tool).slice(0, 140)}] narrows property ${JSON.stringify(name).slice(0, 140)}, which the inputSchema of tool ${JSON.stringify(tool).slice(0, 140)} does not declare`;
}
