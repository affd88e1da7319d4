import type { AgentdojoResults } from './experiment';

/** Keys holding bulk data: written one log per line, compact, so the file stays small and diffable. */
const bulkKeys: ReadonlySet<string> = new Set(['index', 'events']);

/** results/agentdojo.json as text: readable summaries, compact logs. Parses back to `results`. */
export function resultsJson(results: AgentdojoResults): string {
  const members = Object.entries(results).map(([key, value]) => {
    if (!bulkKeys.has(key) || value === null || typeof value !== 'object') return `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`;
    const lines = Object.entries(value as Record<string, unknown>).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return `  ${JSON.stringify(key)}: {\n${lines.join(',\n')}\n  }`;
  });
  return `{\n${members.join(',\n')}\n}\n`;
}
