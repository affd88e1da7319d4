import type { CliCommand } from '../command';
import { reproduceCommand } from './reproduce';
import { verifyCommand } from './verify';

// Each command lives in its own module beside this file; add it here.
export const commands: { readonly [name: string]: CliCommand } = {
  reproduce: reproduceCommand,
  verify: verifyCommand,
};
