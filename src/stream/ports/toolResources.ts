import type { HopFacts } from '../../domain/fetchHop';
import type { MeterAmounts } from '../../domain/events';
import type { ToolContext } from '../types';

/** Flags `ctx.open` takes. `w` writes into the checked file in place; `ctx.writeFile` replaces it atomically. */
export type CheckedOpenFlags = 'r' | 'r+' | 'w' | 'wx' | 'a';

/** Resolves a host name to addresses (text); the first one is checked and connected to. */
export type ResolveHost = (hostname: string) => Promise<readonly string[]>;

export interface CheckedFetchInit {
  readonly method?: string;
  readonly headers?: Record<string, string> | ReadonlyArray<readonly [string, string]> | Headers;
  readonly body?: string | Uint8Array;
  /** 'follow' (default): redirects are followed here, each hop checked; 'manual': the 3xx is returned; 'error': a redirect throws. */
  readonly redirect?: 'follow' | 'manual' | 'error';
  readonly signal?: AbortSignal;
}

/**
 * Why `ctx.open`, `ctx.fetch` and their siblings refused. Stable strings:
 * - `invalid_resource`: the path or URL has no canonical resource (NUL, dangling symlink, loop,
 *   userinfo, a decoded `/`…), or the object is not what the helper handles (a FIFO, a device);
 * - `resource_not_permitted`: its real location is not one of this call's checked resources, or the
 *   URL is outside every scope of the grant;
 * - `resource_changed`: the object at the checked location is no longer the one that was checked
 *   (a symlink or another file swapped in after the check);
 * - `address_not_permitted`: the host resolved to a loopback, private, link-local, unspecified or
 *   reserved address that no scope names literally;
 * - `redirect_limit`: more than 10 redirects;
 * - `call_not_running`: the call has ended (returned, threw, timed out) and a tool kept its context;
 * - `ledger_unavailable`: the ledger could not record the hop's decision (fail closed).
 */
export type ResourceRefusalCode =
  | 'invalid_resource'
  | 'resource_not_permitted'
  | 'resource_changed'
  | 'address_not_permitted'
  | 'redirect_limit'
  | 'call_not_running'
  | 'ledger_unavailable';

/** One thing a resource helper resolved while a call's resources were named; the core only carries it to the call's context. */
export interface ResourceNote {
  readonly resource: string;
}

/** What admission checked for one call: the resources `resources(args)` named, and what each `fsResource` in it resolved. */
export interface CheckedResources {
  readonly resources: readonly string[];
  readonly fsChecks: readonly ResourceNote[];
}

/** What the ledger lends every call's context: the grant's scopes, hop decisions through the log, the resolver. */
export interface CallHops {
  scopesOf(grantId: string): readonly string[];
  decideHop(callId: string, facts: HopFacts): Promise<'allowed' | ResourceRefusalCode>;
  readonly resolveHost: ResolveHost;
}

/** A running call's context as the ledger drives it: ended once its outcome is decided; `reported` read at settlement. */
export interface RunningToolContext extends ToolContext {
  end(): void;
  readonly reported: MeterAmounts | undefined;
}

/**
 * The resources room as the core uses it (src/resources implements it; the public entry wires it in),
 * so the core loads no `node:fs`, `node:http` or `node:dns`.
 */
export interface ToolResources {
  readonly noneChecked: CheckedResources;
  /** Runs a tool's `resources(args)` and gathers what resource helpers resolved inside it. Synchronous. */
  collectChecks<T>(named: () => T): { readonly value: T; readonly checks: readonly ResourceNote[] };
  callContext(callId: string, grantId: string, abort: { readonly signal: AbortSignal; readonly aborted: boolean }, checked: CheckedResources, hops: CallHops): RunningToolContext;
}
