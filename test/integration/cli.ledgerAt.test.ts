import path from 'node:path';
import { withLedgerAt } from '../../src/cli/ledgerFile';
import { sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

test('a --ledger file that does not exist is exit 2 with the command named, and use never runs', async () => {
  const lines: string[] = [];
  let used = false;
  const code = await withLedgerAt('grants', path.join(tmp.dir, 'absent.sqlite'), { create: false }, (l) => lines.push(l), async () => {
    used = true;
    return 0;
  });
  expect(code).toBe(2);
  expect(used).toBe(false);
  expect(lines).toEqual([`atc grants: no ledger file at ${path.join(tmp.dir, 'absent.sqlite')}`]);
});

test('a use that throws is exit 1 with its message, and the ledger is closed all the same', async () => {
  const file = path.join(tmp.dir, 'throws.sqlite');
  const lines: string[] = [];
  let closed = false;
  const code = await withLedgerAt('revoke', file, { create: true }, (l) => lines.push(l), async (ledger) => {
    const close = ledger.close.bind(ledger);
    ledger.close = async () => {
      closed = true;
      await close();
    };
    throw new Error('unknown grant');
  });
  expect(code).toBe(1);
  expect(closed).toBe(true);
  expect(lines).toEqual(['atc revoke: unknown grant']);
});

test("a use that returns gives its exit code and writes nothing", async () => {
  const lines: string[] = [];
  const code = await withLedgerAt('issue', path.join(tmp.dir, 'fresh.sqlite'), { create: true }, (l) => lines.push(l), async () => 0);
  expect(code).toBe(0);
  expect(lines).toEqual([]);
});
