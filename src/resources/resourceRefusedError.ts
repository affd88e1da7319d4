import type { ResourceRefusalCode } from '../stream/ports/toolResources';

export type { ResourceRefusalCode };

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
