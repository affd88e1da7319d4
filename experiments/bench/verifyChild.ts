// Run by scenarios/longLog.ts as `node verifyChild.js <log.jsonl>`; prints one JSON line.
// A fresh process, as `atc verify` would be: the bench's own heap (a million stored bodies just
// read back, earlier scenarios' garbage) would otherwise be collected during the timed verify.
import { readFileSync } from 'node:fs';
import { verify, verifyParallel } from '../../src';
import { jsonLines, sharedBytes } from '../../src/verification/jsonLines';
import { now } from './stats';

async function main(): Promise<void> {
  const bytes = sharedBytes(readFileSync(process.argv[2] as string));
  const p0 = now();
  const parallel = await verifyParallel(bytes);
  const parallelNs = now() - p0;
  const s0 = now();
  const sequential = verify(jsonLines(bytes));
  const sequentialNs = now() - s0;
  process.stdout.write(
    JSON.stringify({
      bytes: bytes.byteLength,
      checked: parallel.checked,
      ok: parallel.ok,
      same: JSON.stringify(parallel) === JSON.stringify(sequential),
      parallelMs: parallelNs / 1e6,
      sequentialMs: sequentialNs / 1e6,
    }) + '\n',
  );
}

void main();
