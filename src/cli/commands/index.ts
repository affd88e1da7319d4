import type { CliCommand } from '../command';

// Each command lives in its own module beside this file; add it here.
export const commands: { readonly [name: string]: CliCommand } = {};
