// A separate process that writes a SQLite log through the public API (the built package), driven
// by JSON lines on stdin, one reply line per request on stdout. The audit view tests use it as "another
// process appending decisions". Requests: setup, invoke {grant, tool, args}, hold {grant} (a call
// that stays in flight until release), release, attenuate {parent, name, budget}, revoke {grant},
// issueTimed {name, callTimeoutMs} (a grant for notes.slow with a call timeout), close.
'use strict';
const path = require('node:path');
const readline = require('node:readline');
const { createLedger, sqliteStore } = require(path.join(__dirname, '../../dist/src'));

const file = process.argv[2];
const ledger = createLedger({ store: sqliteStore({ path: file }) });
const grants = {};
const held = [];
const running = [];
const schema = { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } };

async function handle(request) {
  switch (request.op) {
    case 'setup': {
      await ledger.registerTool({ name: 'notes.write', inputSchema: schema, run: () => 'ok' });
      await ledger.registerTool({ name: 'notes.read', inputSchema: schema, run: () => 'ok' });
      await ledger.registerTool({ name: 'notes.slow', inputSchema: schema, run: () => new Promise((resolve) => held.push(resolve)) });
      const expiresAt = Date.now() + 3_600_000;
      grants.A = await ledger.issue({ tools: ['notes.write', 'notes.read', 'notes.slow'], expiresAt, budget: { calls: 6, inputBytes: 4_096 } });
      grants.B = await ledger.issue({ tools: ['notes.read'], expiresAt, budget: { calls: 3, inputBytes: 512, rate: { calls: 10, windowMs: 3_600_000 } } });
      return { grants };
    }
    case 'invoke': {
      const token = request.grant === 'none' ? 'not-a-token' : grants[request.grant].token;
      const outcome = await ledger.invoke(token, request.tool, request.args ?? {});
      return { status: outcome.status, reason: outcome.reason, callId: outcome.callId };
    }
    case 'hold': {
      const started = held.length;
      const outcome = ledger.invoke(grants[request.grant].token, 'notes.slow', request.args ?? {});
      // Reply once the tool runs, i.e. the admission is durably in the log.
      while (held.length === started) await new Promise((r) => setImmediate(r));
      running.push(outcome);
      return { held: held.length };
    }
    case 'release': {
      for (const resolve of held.splice(0)) resolve('done');
      // Reply once every released call's settlement is in the log.
      await Promise.all(running.splice(0));
      return { released: true };
    }
    case 'attenuate': {
      const child = await ledger.attenuate(grants[request.parent].token, { budget: request.budget });
      if (child.status !== 'issued') throw new Error(`attenuate: ${child.reason}`);
      grants[request.name] = { grantId: child.grantId, token: child.token };
      return { grantId: child.grantId };
    }
    case 'issueTimed': {
      const expiresAt = Date.now() + 3_600_000;
      grants[request.name] = await ledger.issue({ tools: ['notes.slow'], expiresAt, budget: { calls: 2, inputBytes: 512 }, callTimeoutMs: request.callTimeoutMs });
      return { grantId: grants[request.name].grantId };
    }
    case 'revoke':
      await ledger.revoke(grants[request.grant].grantId);
      return { revoked: true };
    case 'close':
      await ledger.close();
      return { closed: true };
    default:
      return { error: `unknown op ${request.op}` };
  }
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (error) {
      reply = { error: String(error && error.message) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  });
});
lines.on('close', () => void queue.then(() => process.exit(0)));
