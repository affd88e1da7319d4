// An agent whose payments over 100 need a person: run it, then approve (or deny) from another shell.
import { createLedger, sqliteStore, verify } from 'agent-tool-capabilities';

const file = process.argv[2] ?? 'payments.sqlite';
const ledger = createLedger({ store: sqliteStore({ path: file }) });
const paid = [];
await ledger.registerTool({
  name: 'pay',
  inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } }, required: ['to', 'amount'], additionalProperties: false },
  run: async ({ to, amount }) => (paid.push(`${amount} to ${to}`), 'paid'),
});
// The host's grant: payments over 100 wait for a person, at most 10 minutes (log time).
const { token } = await ledger.issue({
  tools: ['pay'],
  expiresAt: Date.now() + 60 * 60_000,
  budget: { calls: 10, inputBytes: 10_000 },
  approvals: { pay: { properties: { amount: { exclusiveMinimum: 100 } } } },
  approvalTimeoutMs: 10 * 60_000,
});
ledger.approvals$.subscribe((e) => {
  if (e.type !== 'approval.requested') return;
  console.log(`waiting: npx --no-install agent-tool-capabilities approve ${e.approvalId} --ledger ${file} --by <you>  (or deny)`);
});
// The agent's side: the small payment runs at once; the large one waits for the decision.
const small = await ledger.invoke(token, 'pay', { to: 'bob', amount: 40 });
const large = await ledger.invoke(token, 'pay', { to: 'carol', amount: 250 });
const status = (o) => (o.status === 'rejected' ? o.reason : o.status);
console.log(JSON.stringify({ small: status(small), large: status(large), paid, verified: verify(ledger.events()).ok }));
await ledger.close();
