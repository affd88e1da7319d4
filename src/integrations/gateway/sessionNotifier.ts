import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ToolListChange } from '../mcp/relay/toolList';
import { printable } from '../../text/printable';
import type { GatewaySession } from './session';

/**
 * Where the gateway sends what concerns sessions rather than one call: a shared upstream's
 * notification tied to no call (a resource update only to the sessions subscribed to it, a list
 * change or a log line to every session), and a re-list that changed the tools (every session gets
 * `tools/list_changed`). A session gone meanwhile is skipped: a notification has no answer to wait for.
 */
export interface SessionNotifier {
  readonly broadcast: (upstream: string, notification: ServerNotification) => Promise<void>;
  readonly toolsChanged: (upstream: string, change: ToolListChange) => void;
}

export function sessionNotifier(sessions: ReadonlyMap<string, GatewaySession>, report: (line: string) => void): SessionNotifier {
  return {
    broadcast: async (upstream: string, notification: ServerNotification): Promise<void> => {
      const uri = notification.method === 'notifications/resources/updated' ? notification.params.uri : undefined;
      const audience = Array.from(sessions.values()).filter((s) => uri === undefined || s.routes.isSubscribed(upstream, uri));
      await Promise.all(audience.map((s) => s.server.notification(notification).catch(() => undefined)));
    },
    toolsChanged: (upstream: string, change: ToolListChange): void => {
      for (const name of change.hidden) report(`tool ${printable(name)} hidden and refused: the upstream changed or dropped it`);
      report(`upstream ${upstream}: tools changed: ${change.added.length} registered, ${change.hidden.length} hidden, ${change.restored.length} restored`);
      for (const session of sessions.values()) void session.server.sendToolListChanged().catch(() => undefined);
    },
  };
}
