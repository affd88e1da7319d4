import type { HostCommandErrorCode } from '../domain/decide';

/** A host command with malformed input (bad tool name, unregistered tool, bad budget…). Nothing changed. */
export class InvalidCommandError extends TypeError {
  override readonly name = 'InvalidCommandError';
  constructor(
    readonly code: HostCommandErrorCode,
    message: string,
  ) {
    super(message);
  }
}
