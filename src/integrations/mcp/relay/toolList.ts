import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../../domain/canonicalJson';
import type { Ledger } from '../../../stream/types';
import type { ResourceMapping } from '../resourceMapping';
import { listUpstreamTools, upstreamToolsMax } from '../upstream';
import { attachUpstreamTool, type ForwardOptions, type LiveToolSet } from '../upstreamTools';

export interface ToolListChange {
  readonly added: readonly string[];
  /** Hidden and refused: their `inputSchema` changed, or the upstream no longer lists them. */
  readonly hidden: readonly string[];
  /** Listed again as they were attached: callable again. */
  readonly restored: readonly string[];
}

/** The proxy's source: its one upstream, each tool registered under the upstream's name. */
export interface ProxyToolSource {
  readonly ledger: Ledger;
  readonly upstream: Client;
  readonly mapping: ResourceMapping;
  readonly forward?: ForwardOptions;
}

/** A host's own source (the gateway's): how to list, under which name a tool is kept, how to attach one. */
export interface RoutedToolSource {
  readonly list: () => Promise<Tool[]>;
  readonly nameOf: (tool: Tool) => string;
  /** Registers the tool with the ledger under `name`; resolves why not, if it was refused. */
  readonly attach: (tool: Tool, name: string) => Promise<string | undefined>;
}

export type ToolListWatchOptions = (ProxyToolSource | RoutedToolSource) & {
  /** Keyed by the names clients see; `attached` keeps each tool as the upstream listed it. */
  readonly tools: LiveToolSet;
  /** After a re-list that changed something (to notify the sessions). */
  readonly changed: (change: ToolListChange) => void | Promise<void>;
  /** A re-list that failed (the upstream's list malformed, too long, the upstream gone): one line, no values. */
  readonly failed?: (why: string) => void;
};

function routed(options: ToolListWatchOptions): RoutedToolSource {
  if ('list' in options) return options;
  const { ledger, upstream, mapping } = options;
  return { list: () => listUpstreamTools(upstream), nameOf: (tool) => tool.name, attach: (tool) => attachUpstreamTool(ledger, upstream, tool, mapping, options.forward ?? {}) };
}

export const changedSchemaRefusal = (name: string): string => `the upstream's inputSchema for ${name} changed while the proxy ran (a changed tool needs a new name)`;
export const unlistedRefusal = (name: string): string => `the upstream no longer lists ${name}`;

/**
 * Re-lists the upstream on `notifications/tools/list_changed`. New tools are registered with the
 * ledger; a tool whose `inputSchema` changed is hidden and refused (`tool_refused`), never called
 * under the schema the ledger checked; one no longer listed is hidden and refused too, and callable
 * again if it comes back unchanged. Notifications that arrive during a re-list coalesce into one
 * more re-list after it, so a flood of them costs at most two lists at a time.
 */
export function toolListWatch(options: ToolListWatchOptions): { readonly notify: () => void; readonly settled: () => Promise<void> } {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    do {
      again = false;
      try {
        const change = await relist(options);
        if (change.added.length + change.hidden.length + change.restored.length > 0) await options.changed(change);
      } catch (error) {
        options.failed?.(error instanceof Error ? error.message : 'the re-list failed');
      }
    } while (again);
    running = undefined;
  };
  return {
    notify: () => {
      if (running !== undefined) again = true;
      else running = run();
    },
    settled: () => running ?? Promise.resolve(),
  };
}

async function relist(options: ToolListWatchOptions): Promise<ToolListChange> {
  const { tools } = options;
  const source = routed(options);
  const listed = new Map<string, Tool>();
  const twice = new Set<string>();
  for (const tool of await source.list()) {
    const name = source.nameOf(tool);
    if (listed.has(name)) twice.add(name);
    listed.set(name, tool);
  }
  const shown = (name: string, tool: Tool): Tool => (name === tool.name ? tool : { ...tool, name });
  const added: string[] = [];
  const hidden: string[] = [];
  const restored: string[] = [];
  const hide = (name: string, why: string): void => {
    if (tools.registered.delete(name)) hidden.push(name);
    tools.refused.set(name, why);
  };
  for (const [name, tool] of listed) {
    const attached = tools.attached.get(name);
    if (twice.has(name)) hide(name, 'the upstream lists this name twice');
    else if (attached !== undefined) {
      if (canonicalJson(attached.inputSchema) !== canonicalJson(tool.inputSchema)) hide(name, changedSchemaRefusal(name));
      else if (tools.registered.has(name)) tools.registered.set(name, shown(name, tool)); // a new description or annotations: shown as listed
      else {
        tools.refused.delete(name);
        tools.registered.set(name, shown(name, tool));
        restored.push(name);
      }
    } else if (tools.attached.size >= upstreamToolsMax) {
      // Each new name is an event in the log: an upstream renaming its tools forever stops here.
      tools.refused.set(name, `the upstream has named more than ${upstreamToolsMax} tools since the proxy started`);
    } else if (!tools.refused.has(name)) {
      const refusal = await source.attach(tool, name);
      if (refusal !== undefined) tools.refused.set(name, refusal);
      else {
        tools.attached.set(name, tool);
        tools.registered.set(name, shown(name, tool));
        added.push(name);
      }
    }
  }
  for (const name of [...tools.registered.keys()]) if (!listed.has(name)) hide(name, unlistedRefusal(name));
  return { added, hidden, restored };
}
