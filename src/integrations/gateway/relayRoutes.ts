import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';

/** Entries each map keeps at most (a session listing forever stays bounded; the oldest go first). */
export const routesMax = 10_000;
/** A URI or template longer than this is never matched against templates (their matcher is a regex). */
const uriMatchMax = 2_048;
const ambiguous = '';

/**
 * What one session has learnt from the upstreams' lists, to route what it asks next: which upstream
 * listed a resource URI or a prompt name (one listed by two upstreams is ambiguous and refused),
 * each upstream's resource templates, and the session's resource subscriptions.
 */
export class RelayRoutes {
  private readonly uris = new Map<string, string>();
  private readonly prompts = new Map<string, string>();
  private readonly templates = new Map<string, readonly string[]>();
  private readonly subscriptions = new Map<string, Set<string>>();
  private subscribed = 0;

  listedUri(uri: string, upstream: string): void {
    remember(this.uris, uri, upstream);
  }

  listedPrompt(name: string, upstream: string): void {
    remember(this.prompts, name, upstream);
  }

  listedTemplates(upstream: string, templates: readonly string[]): void {
    this.templates.set(upstream, templates.slice(0, routesMax));
  }

  promptOwner(name: string): string | undefined {
    const owner = this.prompts.get(name);
    return owner === ambiguous ? undefined : owner;
  }

  /** The upstream that listed this URI, or whose template (or template text) it matches; undefined when none or several. */
  uriOwner(uri: string): string | undefined {
    const listed = this.uris.get(uri);
    if (listed !== undefined) return listed === ambiguous ? undefined : listed;
    if (uri.length > uriMatchMax) return undefined;
    const owners = new Set<string>();
    for (const [upstream, templates] of this.templates) {
      if (templates.some((t) => t === uri || matches(t, uri))) owners.add(upstream);
    }
    return owners.size === 1 ? (owners.values().next().value as string) : undefined;
  }

  /** Records a subscription: `held` when the session already holds it, `full` when it holds `routesMax`. */
  subscribe(upstream: string, uri: string): 'added' | 'held' | 'full' {
    const set = this.subscriptions.get(upstream) ?? new Set<string>();
    if (set.has(uri)) return 'held';
    if (this.subscribed >= routesMax) return 'full';
    set.add(uri);
    this.subscriptions.set(upstream, set);
    this.subscribed++;
    return 'added';
  }

  /** Drops a subscription; false when the session did not hold it. */
  unsubscribe(upstream: string, uri: string): boolean {
    if (this.subscriptions.get(upstream)?.delete(uri) !== true) return false;
    this.subscribed--;
    return true;
  }

  isSubscribed(upstream: string, uri: string): boolean {
    return this.subscriptions.get(upstream)?.has(uri) === true;
  }

  /** Every subscription the session holds, dropped from it (the session is closing): each is released once. */
  releaseAll(): [string, string][] {
    const held = Array.from(this.subscriptions, ([upstream, uris]) => Array.from(uris, (uri): [string, string] => [upstream, uri])).flat();
    this.subscriptions.clear();
    this.subscribed = 0;
    return held;
  }
}

function remember(map: Map<string, string>, key: string, upstream: string): void {
  const known = map.get(key);
  if (known !== undefined) {
    if (known !== upstream) map.set(key, ambiguous);
    return;
  }
  if (map.size >= routesMax) map.delete(map.keys().next().value as string);
  map.set(key, upstream);
}

function matches(template: string, uri: string): boolean {
  if (template.length > uriMatchMax) return false;
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false; // a template the SDK cannot parse matches nothing
  }
}
