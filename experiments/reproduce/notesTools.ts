import type { Ledger, ToolContext } from '../../src';
import type { NotesStore } from './notesStore';

export const notesToolNames = ['notes.list', 'notes.read', 'notes.write', 'notes.delete'] as const;
export type NotesToolName = (typeof notesToolNames)[number];

/**
 * Lets a run hold a tool between its start and its effect (the revocation runs block a call there
 * and release it on an event). Not used by the sequential or concurrency runs.
 */
export interface NotesToolHooks {
  readonly beforeEffect?: (tool: NotesToolName, ctx: ToolContext) => Promise<void>;
}

const path = { type: 'string', minLength: 1 } as const;

/** Registers the four notes tools on `ledger`, acting on `store`; each names its `notes:/…` resource. */
export async function registerNotesTools(ledger: Ledger, store: NotesStore, hooks: NotesToolHooks = {}): Promise<void> {
  const hold = async (tool: NotesToolName, ctx: ToolContext): Promise<void> => {
    store.recordRun(ctx.callId);
    if (hooks.beforeEffect !== undefined) await hooks.beforeEffect(tool, ctx);
  };
  await ledger.registerTool<{ dir: string }, string[]>({
    name: 'notes.list',
    inputSchema: { type: 'object', properties: { dir: path }, required: ['dir'], additionalProperties: false },
    resources: (args) => [`notes:/${args.dir}`],
    run: async (args, ctx) => {
      await hold('notes.list', ctx);
      return store.list(args.dir);
    },
  });
  await ledger.registerTool<{ path: string }, string | null>({
    name: 'notes.read',
    inputSchema: { type: 'object', properties: { path }, required: ['path'], additionalProperties: false },
    resources: (args) => [`notes:/${args.path}`],
    run: async (args, ctx) => {
      await hold('notes.read', ctx);
      return store.read(args.path);
    },
  });
  await ledger.registerTool<{ path: string; text: string }, string>({
    name: 'notes.write',
    inputSchema: { type: 'object', properties: { path, text: { type: 'string' } }, required: ['path', 'text'], additionalProperties: false },
    resources: (args) => [`notes:/${args.path}`],
    // A meter (docs/budgets.md): the characters a write may add, capped on the sequential run's `metered` grant.
    cost: (args) => ({ chars: args.text.length }),
    run: async (args, ctx) => {
      await hold('notes.write', ctx);
      store.write(ctx.callId, args.path, args.text);
      return 'written';
    },
  });
  await ledger.registerTool<{ path: string }, boolean>({
    name: 'notes.delete',
    inputSchema: { type: 'object', properties: { path }, required: ['path'], additionalProperties: false },
    resources: (args) => [`notes:/${args.path}`],
    run: async (args, ctx) => {
      await hold('notes.delete', ctx);
      return store.delete(ctx.callId, args.path);
    },
  });
}
