import fs from 'node:fs';
import path from 'node:path';

/** The package's version (for MCP `serverInfo` / `clientInfo`), found by walking up to package.json. */
export function packageVersion(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agent-tool-capabilities' && typeof pkg.version === 'string') return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}
