import type { CliCommand } from '../command';
import { eventHash } from '../../domain/chain';
import { processIo, type CliIo } from '../io';
import { parseOrExit, usageError, type CommandSpec } from '../options';
import { nodeCrypto, parseVerifierKey, signatureTypes, verifyEventProof, type VerifierKey } from '../../transparency';
import type { LedgerEvent } from '../../domain/events';
import { CliFailure, exitOnFailure, keyArgument, readText } from './logHashes';

export const verifyProofSpec: CommandSpec = {
  name: 'verify-proof',
  summary: 'check a tlog-proof with only the verifier key (--vkey <key|@file>); exit 1 if invalid',
  usage: ['<proof-file> --vkey <key|@file> [--witness <key|@file>]… [--event <event.json>]'],
  description: 'Checks the checkpoint\'s signature, each given witness\'s cosignature and the inclusion of the event hash; no log needed. Exit 0 valid, 1 invalid, 2 unreadable input or usage.',
  operands: { name: '<proof-file>', min: 1, max: 1 },
  options: [
    { name: 'vkey', value: '<key|@file>', required: true, description: "the log's verifier key (from `atc keygen`), or @file holding it" },
    { name: 'witness', value: '<key|@file>', multiple: true, description: "a witness's cosignature key that must have cosigned (repeatable)" },
    { name: 'event', value: '<event.json>', description: 'the event as the log stores it: its recomputed hash must be the proven one' },
  ],
};

/**
 * `atc verify-proof`: checks a tlog-proof with only the log's verifier key (no log needed): the
 * checkpoint's signature, each given witness's cosignature, and the inclusion of the event hash.
 * With --event, the hash recomputed from that event (as the log stores it) must be the proven one.
 * Exit 0 valid, 1 invalid (signature, proof or leaf), 2 unreadable input or usage.
 */
export async function runVerifyProof(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(verifyProofSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const positional = parsed.positional;
  const witnesses = parsed.lists.get('witness') ?? [];
  const vkey = parsed.values.get('vkey') as string;
  const eventFile = parsed.values.get('event');
  if (vkey === '' || witnesses.includes('') || eventFile === '') return usageError(verifyProofSpec, io, 'an empty --vkey, --witness or --event');
  return exitOnFailure('verify-proof', io, async () => {
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
  });
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
  summary: verifyProofSpec.summary,
  spec: verifyProofSpec,
  run: (args) => runVerifyProof(args),
};
