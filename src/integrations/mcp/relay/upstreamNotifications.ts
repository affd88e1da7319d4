import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { CallRouter } from './callRouter';

export interface UpstreamNotificationRelayOptions {
  readonly upstream: Client;
  readonly router: CallRouter;
  /**
   * Where a notification tied to no call goes (resources updated, resource and prompt list changes,
   * a log line outside any call): the proxy's one client; for a gateway, the sessions on this
   * upstream connection.
   */
  readonly audience: (notification: ServerNotification) => Promise<void>;
  /** The upstream's tool list changed: re-list it (the relay's ToolListWatch). */
  readonly onToolsChanged: () => void;
}

/** Notifications that belong to the call being served: a log line, the end of a URL elicitation. */
const perCall = new Set(['notifications/message', 'notifications/elicitation/complete']);

/**
 * Relays the upstream's own notifications (progress goes with each forwarded call, upstreamTools).
 * A per-call notification reaches the session whose call is in flight; while calls of several
 * sessions are (a shared connection) it is dropped rather than shown to a session that may not be
 * its own. Delivery failures (a client gone) are ignored: a notification has no answer to wait for.
 */
export function relayUpstreamNotifications(options: UpstreamNotificationRelayOptions): void {
  const { upstream, router, audience } = options;
  upstream.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/tools/list_changed') return options.onToolsChanged();
    const relayed = notification as ServerNotification;
    if (perCall.has(notification.method)) {
      const route = router.route();
      if ('link' in route) return route.link.sendNotification(relayed).catch(() => undefined);
      if (route.refused === 'ambiguous') return;
    }
    await audience(relayed).catch(() => undefined);
  };
}
