import { RelayRoutes, routesMax } from '../../src/integrations/gateway/relayRoutes';
import { SharedSubscriptions } from '../../src/integrations/gateway/sharedSubscriptions';

// What a gateway session learns from the upstreams' lists to route what it asks next, and the
// subscriptions a shared upstream holds for several sessions.

describe('RelayRoutes', () => {
  it('routes a listed URI to the upstream that listed it', () => {
    const routes = new RelayRoutes();
    routes.listedUri('file:///a', 'files');
    expect(routes.uriOwner('file:///a')).toBe('files');
  });

  it('refuses a URI two upstreams listed, rather than choosing one', () => {
    const routes = new RelayRoutes();
    routes.listedUri('file:///a', 'files');
    routes.listedUri('file:///a', 'other');
    expect(routes.uriOwner('file:///a')).toBeUndefined();
  });

  it('routes an unlisted URI by the one upstream whose template matches it, and none when two match', () => {
    const routes = new RelayRoutes();
    routes.listedTemplates('files', ['file:///{path}']);
    routes.listedTemplates('docs', ['docs://{id}']);
    expect(routes.uriOwner('docs://7')).toBe('docs');
    expect(routes.uriOwner('mail://x')).toBeUndefined();
    routes.listedTemplates('mirror', ['docs://{id}']);
    expect(routes.uriOwner('docs://7')).toBeUndefined();
  });

  it('matches no template against a URI longer than the bound', () => {
    const routes = new RelayRoutes();
    routes.listedTemplates('files', ['file:///{path}']);
    expect(routes.uriOwner(`file:///${'a'.repeat(3_000)}`)).toBeUndefined();
  });

  it('keeps at most routesMax listed URIs, dropping the oldest', () => {
    const routes = new RelayRoutes();
    for (let i = 0; i <= routesMax; i++) routes.listedUri(`u:${i}`, 'up');
    expect(routes.uriOwner('u:0')).toBeUndefined();
    expect(routes.uriOwner(`u:${routesMax}`)).toBe('up');
  });

  it('records a subscription once, refuses one past the cap, and releases them all once', () => {
    const routes = new RelayRoutes();
    expect(routes.subscribe('up', 'a')).toBe('added');
    expect(routes.subscribe('up', 'a')).toBe('held');
    for (let i = 1; i < routesMax; i++) routes.subscribe('up', `u:${i}`);
    expect(routes.subscribe('up', 'one-more')).toBe('full');
    expect(routes.releaseAll()).toHaveLength(routesMax);
    expect(routes.releaseAll()).toEqual([]);
    expect(routes.isSubscribed('up', 'a')).toBe(false);
  });
});

describe('SharedSubscriptions', () => {
  it('subscribes the upstream for the first holder and unsubscribes it after the last', () => {
    const shared = new SharedSubscriptions();
    expect(shared.add('up', 'a')).toBe(true);
    expect(shared.add('up', 'a')).toBe(false);
    expect(shared.remove('up', 'a')).toBe(false);
    expect(shared.remove('up', 'a')).toBe(true);
    expect(shared.remove('up', 'a')).toBe(false);
  });
});
