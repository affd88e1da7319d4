import type { CliCommand } from '../command';
import { agentdojoCommand } from './agentdojo';
import { auditCommand } from './audit';
import { checkpointCommand } from './checkpoint';
import { exportCommand } from './export';
import { grantsCommand } from './grants';
import { issueCommand } from './issue';
import { proxyCommand } from './proxy';
import { keygenCommand } from './keygen';
import { proveCommand } from './prove';
import { reproduceCommand } from './reproduce';
import { revokeCommand } from './revoke';
import { serveCommand } from './serve';
import { verifyCommand } from './verify';
import { verifyProofCommand } from './verifyProof';

// Each command lives in its own module beside this file; add it here.
export const commands: { readonly [name: string]: CliCommand } = {
  agentdojo: agentdojoCommand,
  audit: auditCommand,
  checkpoint: checkpointCommand,
  export: exportCommand,
  grants: grantsCommand,
  issue: issueCommand,
  proxy: proxyCommand,
  keygen: keygenCommand,
  prove: proveCommand,
  reproduce: reproduceCommand,
  revoke: revokeCommand,
  serve: serveCommand,
  verify: verifyCommand,
  'verify-proof': verifyProofCommand,
};
