// Run by scenarios/memory.ts as `node --expose-gc memoryChild.js <grants> <calls>`; prints one JSON line.
import { oursCall, oursLedger } from './ours';

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const grants = Number(process.argv[2]);
  const calls = Number(process.argv[3]);
  const base = await oursLedger({ grants: 1 });
  const empty = heapAfterGc();
  // Issue `grants` more grants on a fresh ledger, measured against a ledger holding one.
  const many = await oursLedger({ grants });
  const withGrants = heapAfterGc();
  const token = many.tokens[0] as string;
  for (let i = 0; i < calls; i++) await oursCall(many.ledger, token, i);
  const withEvents = heapAfterGc();
  const events = many.ledger.events().length;
  process.stdout.write(
    JSON.stringify({
      grants,
      calls,
      events,
      bytesPerGrant: (withGrants - empty) / grants,
      bytesPerEvent: (withEvents - withGrants) / (2 * calls),
    }) + '\n',
  );
  await many.ledger.close();
  await base.ledger.close();
}

void main();
