import { addressClass, ipHostText, parseIp } from './addresses';
import { limits } from './limits';
import { isCanonicalResource, scopeCovers } from './resources';

/**
 * The rule for one hop of `ctx.fetch` (the first request or a redirect), decided on what the shell
 * worked out: the hop's canonical URL resource (`https:/host:443/seg…`) and the address the host
 * resolved to. Pure, so `verify` re-derives every logged hop from the grant's scopes.
 */
export const hopRefusalReasons = ['invalid_resource', 'resource_not_permitted', 'address_not_permitted', 'redirect_limit'] as const;
export type HopRefusalReason = (typeof hopRefusalReasons)[number];

export interface HopFacts {
  /** 0 for the request itself, 1… for each redirect followed. */
  readonly hop: number;
  /** The canonical URL resource, or undefined when the URL had none (unparseable, userinfo…). */
  readonly resource: string | undefined;
  /** The address the shell will connect to; undefined when it did not resolve the host (not covered). */
  readonly address: string | undefined;
}

/** `https:/host:443/a/b` → its parts; undefined when the resource is not a URL resource. */
export function urlResourceParts(resource: string): { readonly scheme: string; readonly host: string; readonly port: number; readonly rest: string } | undefined {
  const match = /^(https?):\/((?:\[[0-9a-f:.]+\]|[^/:[\]]+)):([1-9][0-9]{0,4})(\/.*)?$/.exec(resource);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { scheme: match[1] as string, host: match[2] as string, port, rest: match[4] ?? '' };
}

/** A scope that names this authority (scheme, host text, port) itself, not only a wider prefix. */
function namesAuthority(scope: string, authority: string): boolean {
  return scope === authority || scope.startsWith(`${authority}/`);
}

/**
 * One hop against a delegation chain's scopes, the call's own grant first, then its ancestors
 * (root first): allowed only when every grant would allow it on its own scopes, else the first
 * refusal. A child's scopes lie inside its parent's (checked at issue), so resources and ports
 * decide as before; what the chain adds is the address rule: a loopback, private or link-local
 * address is named only when every grant from the host-issued root down names it, so an agent's
 * own attenuation can never turn a refusal into an admission (issue 30, item 1).
 */
export function chainHopDecision(own: readonly string[], ancestors: readonly (readonly string[])[], facts: HopFacts): 'allowed' | HopRefusalReason {
  const verdict = hopDecision(own, facts);
  if (verdict !== 'allowed') return verdict;
  for (const scopes of ancestors) {
    const theirs = hopDecision(scopes, facts);
    if (theirs !== 'allowed') return theirs;
  }
  return 'allowed';
}

/** One hop against one grant's scopes. */
export function hopDecision(scopes: readonly string[], facts: HopFacts): 'allowed' | HopRefusalReason {
  if (!Number.isSafeInteger(facts.hop) || facts.hop < 0) return 'invalid_resource';
  if (facts.hop > limits.redirectsMax) return 'redirect_limit';
  const resource = facts.resource;
  if (!isCanonicalResource(resource)) return 'invalid_resource'; // undefined included
  const parts = urlResourceParts(resource);
  if (parts === undefined) return 'invalid_resource';
  if (!scopes.some((scope) => scopeCovers(scope, resource))) return 'resource_not_permitted';
  const address = facts.address === undefined ? undefined : parseIp(facts.address);
  if (address === undefined) return 'invalid_resource';
  const addressHost = ipHostText(address);
  // A host written as an address connects to that address and nothing else.
  if (parseIp(parts.host.replace(/^\[|\]$/g, '')) !== undefined && parts.host !== addressHost) return 'invalid_resource';
  if (addressClass(address) === 'public') return 'allowed';
  // Loopback, private, link-local, unspecified, reserved: only when a scope names the address itself.
  const authority = `${parts.scheme}:/${addressHost}:${parts.port}`;
  const atAddress = `${authority}${parts.rest}`;
  return scopes.some((scope) => namesAuthority(scope, authority) && scopeCovers(scope, atAddress)) ? 'allowed' : 'address_not_permitted';
}
