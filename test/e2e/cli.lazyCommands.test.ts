import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { commands } from '../../src/cli/commands';

const main = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');

describe('atc commands load their modules lazily', () => {
  it.each(Object.keys(commands))('%s: the help line is the module\'s own summary', async (name) => {
    const command = commands[name];
    expect(command).toBeDefined();
    const loaded = await command!.load();
    expect(command!.summary).toBe(loaded.summary);
  });

  it('atc --help lists every command without loading any command module, the experiments or the MCP SDK', () => {
    const probe = `process.argv = [process.argv[0], ${JSON.stringify(main)}, '--help']; require(${JSON.stringify(main)}); process.on('exit', () => { const loaded = Object.keys(require.cache); console.log(JSON.stringify({ commands: loaded.filter((f) => /[\\\\/]cli[\\\\/]commands[\\\\/](?!index\\.js)/.test(f)).length, experiments: loaded.some((f) => /[\\\\/]dist[\\\\/]experiments[\\\\/]/.test(f)), mcp: loaded.some((f) => f.includes('@modelcontextprotocol')) })); });`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    for (const name of Object.keys(commands)) expect(r.stdout).toContain(`\n  ${name} `);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1) as string)).toEqual({ commands: 0, experiments: false, mcp: false });
  });
});
