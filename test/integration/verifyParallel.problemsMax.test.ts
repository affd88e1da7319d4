import * as path from 'node:path';
import type { LedgerEvent, verifyParallel as verifyParallelFn } from '../../src';
import { given, issueCommand, registerNotes, admit } from '../support/given';

// The worker thread needs compiled JS, so verifyParallel comes from dist/ (built by `pretest`).
const dist = require(path.resolve(__dirname, '..', '../dist/src/index.js')) as { verifyParallel: typeof verifyParallelFn };

const jsonl = (events: readonly unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

it('verifyParallel is not ok when every problem found is beyond problemsMax', async () => {
  const log = given(registerNotes, issueCommand(), admit()).events;
  const edited = [...log.slice(0, 2), { ...(log[2] as LedgerEvent), at: 1 }];
  expect(await dist.verifyParallel(jsonl(edited), { problemsMax: 0 })).toEqual({ ok: false, checked: 3, problems: [] });
});
