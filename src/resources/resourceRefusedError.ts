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

const messages: Readonly<Record<ResourceRefusalCode, string>> = {
  invalid_resource: 'the path or URL does not name a canonical resource',
  resource_not_permitted: "the real location is not one of this call's checked resources",
  resource_changed: 'the object at the checked location is not the one that was checked',
  address_not_permitted: 'the host resolves to an address that is not public and that no scope names',
  redirect_limit: 'too many redirects',
  call_not_running: 'the call is no longer running',
  ledger_unavailable: 'the ledger could not record the decision',
};

/** A refusal by a resource helper. Its message never echoes the path, URL or any argument value. */
export class ResourceRefusedError extends Error {
  readonly code: ResourceRefusalCode;
  constructor(code: ResourceRefusalCode) {
    super(`refused: ${code}: ${messages[code]}`);
    this.name = 'ResourceRefusedError';
    this.code = code;
  }
}
