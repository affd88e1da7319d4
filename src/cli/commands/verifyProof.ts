import type { CliCommand } from '../command';
import { eventHash } from '../../domain/chain';
import { sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';
import { nodeCrypto, parseVerifierKey, signatureTypes, verifyEventProof, type VerifierKey } from '../../transparency';
import type { LedgerEvent } from '../../domain/events';
import { CliFailure, keyArgument, readText } from './logHashes';

const usage = 'usage: atc verify-proof <proof-file> --vkey <key|@file> [--witness <key|@file>]… [--event <event.json>]';

/**
 * `atc verify-proof`: checks a tlog-proof with only the log's verifier key (no log needed): the
 * checkpoint's signature, each given witness's cosignature, and the inclusion of the event hash.
 * With --event, the hash recomputed from that event (as the log stores it) must be the proven one.
 * Exit 0 valid, 1 invalid (signature, proof or leaf), 2 unreadable input or usage.
 */
export async function runVerifyProof(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const positional: string[] = [];
  const witnesses: string[] = [];
  let vkey: string | undefined;
  let eventFile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = (): string | undefined => args[++i];
    if (arg === '--vkey') vkey = value();
    else if (arg === '--witness') witnesses.push(value() ?? '');
    else if (arg === '--event') eventFile = value();
    else if (arg === '--help' || arg === '-h') {
      io.err(usage);
      return 0;
    } else if (arg.startsWith('--')) {
      io.err(`atc verify-proof: unknown option ${arg}`);
      io.err(usage);
      return 2;
    } else positional.push(arg);
  }
  if (positional.length !== 1 || vkey === undefined || vkey === '' || witnesses.includes('') || eventFile === '') {
    io.err(usage);
    return 2;
  }
  try {
    const logKey = verifierKey(keyArgument(vkey, 'verifier key'));
    const witnessKeys = witnesses.map((w) => verifierKey(keyArgument(w, 'witness key')));
    if (witnessKeys.some((w) => w.type !== signatureTypes.cosignatureV1)) throw new CliFailure(2, 'a witness key is a cosignature key (signature type 0x04)');
    const proofText = readText(positional[0] as string, 'proof');
    let expected: { eventHash: string; seq: number } | undefined;
    if (eventFile !== undefined) {
      let event: LedgerEvent;
      try {
        event = JSON.parse(readText(eventFile, 'event')) as LedgerEvent;
      } catch (error) {
        if (error instanceof CliFailure) throw error;
        throw new CliFailure(2, `${eventFile} is not JSON`);
      }
      try {
        expected = { eventHash: eventHash(event), seq: event.seq };
      } catch {
        throw new CliFailure(2, `${eventFile} is not a ledger event`);
      }
    }
    const result = verifyEventProof(nodeCrypto, proofText, logKey, { witnesses: witnessKeys, ...(expected ?? {}) });
    if (!result.ok) {
      io.err(`atc verify-proof: INVALID (${result.code}): ${result.message}`);
      return 1;
    }
    await io.out(`valid: event seq ${result.seq} (hash ${result.eventHash}) is in ${result.checkpoint.origin}'s tree of ${result.checkpoint.size} events`);
    for (const name of result.cosignedBy) await io.out(`  cosigned by ${name}`);
    if (missingWitness(witnessKeys, result.cosignedBy) !== undefined) {
      io.err(`atc verify-proof: INVALID: no cosignature by witness ${missingWitness(witnessKeys, result.cosignedBy) as string}`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    io.err(`atc verify-proof: ${error.message}`);
    return error.exitCode;
  }
}

function verifierKey(text: string): VerifierKey {
  const parsed = parseVerifierKey(nodeCrypto, text);
  if (!parsed.ok) throw new CliFailure(2, `verifier key: ${parsed.message}`);
  return parsed.key;
}

/** Every witness named on the command line must have cosigned (the simplest policy: all of them). */
function missingWitness(witnesses: readonly VerifierKey[], cosignedBy: readonly string[]): string | undefined {
  return witnesses.find((w) => !cosignedBy.includes(w.name))?.name;
}

export const verifyProofCommand: CliCommand = {
  summary: 'check a tlog-proof with only the verifier key (--vkey <key|@file>); exit 1 if invalid',
  run: (args) => runVerifyProof(args),
};
