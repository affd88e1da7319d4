import type { CliCommand } from '../command';
import { agentdojoCommand } from './agentdojo';
import { auditCommand } from './audit';
import { exportCommand } from './export';
import { reproduceCommand } from './reproduce';
import { serveCommand } from './serve';
import { verifyCommand } from './verify';

// Each command lives in its own module beside this file; add it here.
export const commands: { readonly [name: string]: CliCommand } = {
  agentdojo: agentdojoCommand,
  audit: auditCommand,
  export: exportCommand,
  reproduce: reproduceCommand,
  serve: serveCommand,
  verify: verifyCommand,
};
