import { readFileSync } from 'node:fs';
import { genesisHash } from '../../domain/events';
import { lastLine, nonCanonicalLines, sharedBytes } from '../../verification/jsonLines';
import { verifyParallel } from '../../verification/verifyParallel';
import type { CliIo } from '../io';

const problemsShownMax = 50;

export function isJsonLinesPath(path: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(path);
}

/**
 * `atc verify log.jsonl`: a log as `atc export` writes it (one event per line), checked by
 * `verifyParallel` on two cores: shape, sequence, hash chain, hashes, re-derived decisions, callId
 * reuse. Exit code: 0 verified, 1 problems found, 2 the file cannot be read.
 */
export async function verifyJsonLinesFile(path: string, io: CliIo): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = sharedBytes(readFileSync(path));
  } catch (error) {
    io.err(`atc verify: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return 2;
  }
  const result = await verifyParallel(bytes);
  // `atc export` writes one canonical event per line: a line edited into another form of the same
  // value (or with a duplicated key) is a problem even though its parsed event verifies.
  const nonCanonical = nonCanonicalLines(bytes).map(({ seq }) => ({ seq, code: 'not_canonical', message: 'the line is not exactly the canonical JSON of its event' }));
  io.out(`atc verify ${path}: ${result.checked} events`);
  if (result.ok && nonCanonical.length === 0) {
    // Every event checked out, so the last line is the head the chain ends in.
    const head = result.checked === 0 ? { seq: 0, hash: genesisHash } : (JSON.parse(lastLine(bytes)) as { seq: number; hash: string });
    io.out(`  checked  ${result.checked} events: shape, sequence, hash chain, hashes, re-derived decisions, callId reuse, canonical lines`);
    io.out(`verified: head seq ${head.seq} hash ${head.hash}`);
    return 0;
  }
  const problems = [...result.problems, ...nonCanonical].sort((a, b) => a.seq - b.seq);
  io.err(`problems (${problems.length}${problems.length === 1_000 ? ' or more' : ''}):`);
  for (const p of problems.slice(0, problemsShownMax)) io.err(`  seq ${p.seq} ${p.code}: ${p.message}`);
  if (problems.length > problemsShownMax) io.err(`  … and ${problems.length - problemsShownMax} more`);
  io.err(`NOT VERIFIED: ${problems.length} problem(s), first at seq ${(problems[0] as { seq: number }).seq}`);
  return 1;
}
