import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ClientCapabilities, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/** A downstream MCP session (one client): what it declared at initialize. */
export interface RelaySession {
  /** Unique among the sessions sharing one upstream connection (for the proxy, its one client). */
  readonly id: string;
  clientCapabilities(): ClientCapabilities | undefined;
}

/** A downstream `tools/call` being served: requests and notifications sent through it go with that call. */
export interface CallLink {
  readonly session: RelaySession;
  readonly sendRequest: RequestHandlerExtra<ServerRequest, ServerNotification>['sendRequest'];
  readonly sendNotification: (notification: ServerNotification) => Promise<void>;
}

export type Route = { readonly link: CallLink } | { readonly refused: 'no_call' | 'ambiguous' };

/**
 * The downstream calls in flight toward one upstream connection, so that what the upstream sends
 * while handling a call (sampling, elicitation, roots, logs) reaches the session that made it.
 *
 * The wire says nothing about which call caused an upstream request: over stdio a server's
 * request carries no reference to the request it serves, and the SDK's (1.32) HTTP client
 * transport does not tell on which response stream a message came. So the rule is by
 * association: the request goes to the one session with calls in flight on this connection
 * (with its oldest running call as the related request); with none it is tied to no call, and
 * with calls of several sessions in flight (possible only on a connection that sessions share)
 * it is ambiguous: both are refused rather than guessed. A connection per session (the gateway's
 * HTTP upstreams, the proxy) is never ambiguous.
 */
export class CallRouter {
  /** Insertion-ordered: the first entry is the oldest call still running. */
  private readonly calls = new Map<symbol, CallLink>();

  /** Records a call as in flight; the returned function records its end (call it exactly once). */
  enter(link: CallLink): () => void {
    const key = Symbol('call');
    this.calls.set(key, link);
    return () => void this.calls.delete(key);
  }

  get inFlight(): number {
    return this.calls.size;
  }

  route(): Route {
    let chosen: CallLink | undefined;
    for (const link of this.calls.values()) {
      if (chosen === undefined) chosen = link;
      else if (link.session.id !== chosen.session.id) return { refused: 'ambiguous' };
    }
    return chosen === undefined ? { refused: 'no_call' } : { link: chosen };
  }
}
