import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { commands } from '../../src/cli/commands';
import { nearest } from '../../src/cli/nearest';
import { helpText, parseCommand, type CommandSpec } from '../../src/cli/options';

// The built binary, as a user runs it (dist/, built by `pretest`).
const root = path.resolve(__dirname, '..', '..');
const main = path.join(root, 'dist/src/cli/main.js');
const atc = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

/** Every command's option table, from its own module. */
async function specs(): Promise<CommandSpec[]> {
  const out: CommandSpec[] = [];
  for (const [name, command] of Object.entries(commands)) {
    const module = (await command.load()) as unknown as { spec?: CommandSpec };
    const spec = module.spec;
    if (spec === undefined) throw new Error(`atc ${name} has no option table`);
    out.push(spec);
  }
  return out;
}

describe('atc --help and --version', () => {
  it('atc --help prints the commands on stdout and exits 0', () => {
    for (const flag of ['--help', '-h']) {
      const r = atc(flag);
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      for (const name of Object.keys(commands)) expect(r.stdout).toContain(`\n  ${name} `);
    }
  });

  it('atc --version and -v print the package version', () => {
    for (const flag of ['--version', '-v']) expect(atc(flag)).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('atc <command> --help', () => {
  it('every command has an option table whose name is its command name', async () => {
    for (const spec of await specs()) expect(commands[spec.name]).toBeDefined();
  });

  it.each(Object.keys(commands))('atc %s --help prints to stdout, exit 0, with every option described', async (name) => {
    const spec = (await specs()).find((s) => s.name === name) as CommandSpec;
    const r = atc(name, '--help');
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`usage: atc ${name} `);
    for (const option of spec.options) {
      const line = r.stdout.split('\n').find((l) => l.includes(`--${option.name}${option.value !== undefined ? ` ${option.value}` : ''}  `));
      expect(line).toBeDefined();
      expect(line).toContain(option.description);
      expect(option.description.length).toBeGreaterThan(10);
    }
  });
});

describe('usage errors exit 2 and say what is wrong', () => {
  it('an unknown command names itself and the nearest command', () => {
    const r = atc('verfy', 'x.json');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('unknown command verfy (did you mean verify?)');
  });

  it('an unknown option names itself and the nearest option', () => {
    const r = atc('audit', 'log.sqlite', '--rejcted');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('atc audit: unknown option --rejcted (did you mean --rejected?)');
    expect(r.stderr).toContain("run 'atc audit --help'");
  });

  it('atc grants without --ledger says --ledger is missing and what it is', () => {
    const r = atc('grants');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^atc grants: missing --ledger <log\.sqlite \| postgres:\/\/…>: the ledger/);
  });

  it('an operand the command does not take is refused without echoing it (it may be a token)', () => {
    const r = atc('grants', '--ledger', 'l.sqlite', 'atc_secret-looking-value');
    expect(r.status).toBe(2);
    expect(r.stderr).not.toContain('secret');
  });
});

describe('parseCommand', () => {
  const spec: CommandSpec = {
    name: 't',
    summary: 'test',
    usage: ['x'],
    rest: true,
    operands: { name: '<file>', min: 1, max: 1 },
    options: [
      { name: 'ledger', value: '<file>', required: true, description: 'the ledger file' },
      { name: 'witness', value: '<key>', multiple: true, description: 'a witness key' },
      { name: 'json', description: 'print JSON' },
    ],
  };

  it('reads values, repeated values, flags, operands and what follows --', () => {
    const parsed = parseCommand(spec, ['f', '--ledger=l', '--witness', 'a', '--witness', 'b', '--json', '--', 'node', '--x']);
    expect(parsed).toMatchObject({ positional: ['f'], rest: ['node', '--x'] });
    const p = parsed as Exclude<typeof parsed, 'help' | { error: string }>;
    expect([p.values.get('ledger'), p.lists.get('witness'), p.flags.has('json')]).toEqual(['l', ['a', 'b'], true]);
  });

  it('refuses a missing value, a value on a flag, a missing operand, and too many operands', () => {
    expect(parseCommand(spec, ['f', '--ledger'])).toEqual({ error: '--ledger needs a value: <file>' });
    expect(parseCommand(spec, ['f', '--ledger', '--json'])).toEqual({ error: '--ledger needs a value: <file>' });
    expect(parseCommand(spec, ['f', '--ledger', 'l', '--json=yes'])).toEqual({ error: '--json takes no value' });
    expect(parseCommand(spec, ['--ledger', 'l'])).toEqual({ error: 'missing <file>' });
    expect(parseCommand(spec, ['a', 'b', '--ledger', 'l'])).toMatchObject({ error: expect.stringContaining('too many') });
  });

  it('--help and -h win over anything else', () => {
    expect(parseCommand(spec, ['-h'])).toBe('help');
    expect(parseCommand(spec, ['--help', '--nope'])).toBe('help');
  });

  it('the help lists every option with its description', () => {
    const help = helpText(spec);
    for (const o of spec.options) expect(help).toContain(o.description);
  });
});

describe('nearest', () => {
  it('finds a typo within a few edits, a transposition, or a prefix; nothing when far', () => {
    expect(nearest('verfy', ['verify', 'serve'])).toBe('verify');
    expect(nearest('auidt', ['audit', 'export'])).toBe('audit');
    expect(nearest('--led', ['--ledger', '--json'])).toBe('--ledger');
    expect(nearest('zzzzzz', ['verify', 'audit'])).toBeUndefined();
    expect(nearest('x'.repeat(200), ['verify'])).toBeUndefined();
  });
});
