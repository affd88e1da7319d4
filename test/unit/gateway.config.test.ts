import path from 'node:path';
import { GatewayConfigError, parseGatewayConfig } from '../../src/integrations/gateway/config';

// The gateway config is hostile input like any file: parsed strictly, the first problem named by its field.

const valid = {
  ledger: './gateway.sqlite',
  listen: '127.0.0.1:8787',
  publicUrl: 'http://127.0.0.1:8787/mcp',
  upstreams: { files: { command: ['node', 'server.js'] }, search: { url: 'http://127.0.0.1:9000/mcp' } },
  auth: { tokens: true },
};

function problem(config: unknown): string {
  try {
    parseGatewayConfig(JSON.stringify(config), '/etc/atc/gateway.json');
  } catch (error) {
    if (error instanceof GatewayConfigError) return error.field;
    throw error;
  }
  return '(none)';
}

test('a valid config: the relative ledger path is relative to the config file, defaults filled in', () => {
  const config = parseGatewayConfig(JSON.stringify(valid), '/etc/atc/gateway.json');
  expect(config.ledger).toBe(path.resolve('/etc/atc/gateway.sqlite'));
  expect(config.toolNames).toBe('prefixed');
  expect(config.limits).toMatchObject({ sessionsMax: 1_000, requestBytesMax: 4_194_304, callsInFlightPerSessionMax: 16, sessionIdleMs: 1_800_000 });
  expect(config.upstreams.get('files')).toMatchObject({ kind: 'stdio', command: 'node', args: ['server.js'] });
  expect(parseGatewayConfig(JSON.stringify({ ...valid, ledger: 'postgres://u@h/db' }), '/x/g.json').ledger).toBe('postgres://u@h/db');
});

test.each([
  ['an unknown top-level field', { ...valid, extra: 1 }, 'extra'],
  ['a listen without a port', { ...valid, listen: '127.0.0.1' }, 'listen'],
  ['a publicUrl without a path', { ...valid, publicUrl: 'http://127.0.0.1:8787/' }, 'publicUrl'],
  ['a publicUrl with a query', { ...valid, publicUrl: 'http://127.0.0.1:8787/mcp?x=1' }, 'publicUrl'],
  ['no upstream', { ...valid, upstreams: {} }, 'upstreams'],
  ['an upstream name with __', { ...valid, upstreams: { 'a__b': { url: 'http://h/mcp' } } }, 'upstreams.a__b'],
  ['an upstream with command and url', { ...valid, upstreams: { a: { url: 'http://h/mcp', command: ['x'] } } }, 'upstreams.a'],
  ['an empty command word', { ...valid, upstreams: { a: { command: ['node', ''] } } }, 'upstreams.a.command[1]'],
  ['an upstream url that is not http', { ...valid, upstreams: { a: { url: 'file:///etc/passwd' } } }, 'upstreams.a.url'],
  ['toolNames of another kind', { ...valid, toolNames: 'short' }, 'toolNames'],
  ['both tokens and oauth', { ...valid, auth: { tokens: true, oauth: {} } }, 'auth'],
  ['oauth without jwks', { ...valid, auth: { oauth: { issuer: 'https://i' } } }, 'auth.oauth.jwks'],
  ['oauth without principals', { ...valid, auth: { oauth: { issuer: 'https://i', jwks: 'https://i/jwks' } } }, 'principals'],
  ['principals with tokens', { ...valid, principals: { a: 'dev' }, policies: { dev: { tools: ['a'], budget: { calls: 1, inputBytes: 1 }, expiresIn: '1h' } } }, 'principals'],
  ['a principal naming no policy', { ...valid, auth: { oauth: { issuer: 'https://i', jwks: 'https://i/jwks' } }, principals: { alice: 'nope' } }, 'principals.alice'],
  ['a policy with a bad scope', { ...valid, policies: { dev: { tools: ['a'], scopes: ['fs:/x/../y/'], budget: { calls: 1, inputBytes: 1 }, expiresIn: '1h' } } }, 'policies.dev.scopes[0]'],
  ['an origin with a path', { ...valid, allowedOrigins: ['https://app.example/x'] }, 'allowedOrigins[0]'],
  ['a zero limit', { ...valid, limits: { sessionsMax: 0 } }, 'limits.sessionsMax'],
  ['an unknown limit', { ...valid, limits: { sessions: 5 } }, 'limits.sessions'],
])('%s fails naming the field', (_what, config, field) => {
  expect(problem(config)).toBe(field);
});

test('a config larger than 1 MiB is refused before it is parsed', () => {
  expect(() => parseGatewayConfig(' '.repeat(1_048_577), '/x/g.json')).toThrow(/larger than/);
});
