import { checkLogAgainstCheckpoint, nodeCrypto, parseVerifierKey } from '../../transparency';
import { CliFailure, exitOnFailure, keyArgument, readText, withLogHashes } from './logHashes';
import type { CliIo } from '../io';

/**
 * The checkpoint part of `atc verify <log> --checkpoint <file> --vkey <key|@file>`: exit 0 when the
 * log is the checkpoint's log or an extension of it, 1 when it was truncated, rolled back, forked or
 * rewritten after that checkpoint (or the checkpoint does not verify), 2 for unreadable input.
 */
export async function verifyAgainstCheckpoint(path: string, checkpointFile: string, vkey: string, io: CliIo): Promise<number> {
  return exitOnFailure('verify', io, async () => {
    const key = parseVerifierKey(nodeCrypto, keyArgument(vkey, 'verifier key'));
    if (!key.ok) throw new CliFailure(2, `verifier key: ${key.message}`);
    const checkpoint = readText(checkpointFile, 'checkpoint');
    const result = await withLogHashes(path, (hashes) => checkLogAgainstCheckpoint(nodeCrypto, hashes, checkpoint, key.key));
    if (!result.ok) {
      io.err(`NOT VERIFIED: the log is not consistent with checkpoint ${checkpointFile}: ${result.message}`);
      return 1;
    }
    io.out(`  checked  checkpoint ${checkpointFile}: signed by ${key.key.name}; the log's tree at size ${result.size} has its root (the log has ${result.logSize} events: ${result.logSize === result.size ? 'the same log' : 'an extension of it'})`);
    return 0;
  });
}
