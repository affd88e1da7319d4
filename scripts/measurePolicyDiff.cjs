// node scripts/measurePolicyDiff.cjs [calls] (after npm run build): the time of diffPolicy against verify on one log.
const path = require('node:path');
const root = path.join(__dirname, '..');
const { createLedger } = require(path.join(root, 'dist/src'));
const { parsePolicy } = require(path.join(root, 'dist/src/integrations/mcp/policy'));
const { diffPolicy } = require(path.join(root, 'dist/src/policy/policyDiff'));
const { verify } = require(path.join(root, 'dist/src'));
(async () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  const ledger = createLedger({ clock: () => now });
  const schema = { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path'] };
  for (const name of ['read', 'write', 'delete']) await ledger.registerTool({ name, inputSchema: schema, resources: (a) => [`notes:/${a.path}`], run: () => null });
  const { token } = await ledger.issue({ tools: ['read', 'write'], args: { write: { properties: { text: { maxLength: 20 } } } }, resources: ['notes:/d/'], expiresAt: now + 86_400_000, budget: { calls: 1_000_000, inputBytes: 1e9 }, resourceTemplates: { read: ['notes:/{path}'], write: ['notes:/{path}'] } });
  const n = Number(process.argv[2] ?? 20000);
  for (let i = 0; i < n; i++) {
    now += 100;
    const k = i % 10;
    const tool = k < 6 ? 'read' : k < 9 ? 'write' : 'delete';
    await ledger.invoke(token, tool, { path: k === 5 ? 'e/x' : `d/${i}`, text: k === 8 ? 'x'.repeat(30) : 'hi' });
  }
  const events = ledger.events();
  await ledger.close();
  const candidate = parsePolicy(JSON.stringify({ tools: ['read'], resources: { read: ['notes:/{path}'] }, scopes: ['notes:/d/'], expiresIn: '24h', budget: { calls: 5000, inputBytes: 1e9, rate: { calls: 100, windowMs: 60000 } } }));
  const t1 = process.hrtime.bigint();
  verify(events);
  const t2 = process.hrtime.bigint();
  const d = diffPolicy(events, candidate);
  const t3 = process.hrtime.bigint();
  console.log(JSON.stringify({ events: events.length, calls: d.calls, changes: d.changes.length, verifyMs: Number(t2 - t1) / 1e6, diffMs: Number(t3 - t2) / 1e6, open: d.open, node: process.version }));
})();
