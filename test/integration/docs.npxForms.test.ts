import fs from 'node:fs';
import path from 'node:path';

// `npx atc …` outside a project that installed this package resolves the unrelated npm package
// `atc` and may install and run it. Docs and examples must use a form that can only mean this
// package: `npx -y agent-tool-capabilities …` or `npx --package agent-tool-capabilities atc …`.
const root = path.resolve(__dirname, '..', '..');

function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : /\.(md|json|mjs|js|ts|sh|ya?ml)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** A runner that fetches a package by name, then flags that do not name the package, then `atc`. */
const runner = String.raw`(?:npx|npm\s+(?:exec|x)|pnpm\s+dlx|yarn\s+dlx|bunx)`;
const plainFlag = String.raw`(?:-y|--yes|--no-install|--no|-q|--quiet|--prefer-offline|--offline)`;
const fetchesAtc = new RegExp(String.raw`\b${runner}(?:\s+${plainFlag})*\s+atc\b`);

/** The same in an MCP client configuration: `"command": "npx", "args": [flags…, "atc", …]`. */
function configFetchesAtc(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(configFetchesAtc);
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as { command?: unknown; args?: unknown };
  if (entry.command === 'npx' && Array.isArray(entry.args)) {
    const first = (entry.args as unknown[]).find((a) => typeof a === 'string' && !new RegExp(`^${plainFlag}$`).test(a));
    if (first === 'atc') return true;
  }
  return Object.values(value).some(configFetchesAtc);
}

const scanned = [path.join(root, 'README.md'), ...files(path.join(root, 'docs')), ...files(path.join(root, 'examples'))];

it('no doc or example runs `npx atc` (or another runner fetching the package named atc)', () => {
  expect(scanned.length).toBeGreaterThan(10);
  const offending: string[] = [];
  for (const file of scanned) {
    const text = fs.readFileSync(file, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (fetchesAtc.test(line)) offending.push(`${path.relative(root, file)}:${i + 1}: ${line.trim()}`);
    });
    // Flags and the package name may be on separate lines of a JSON args array.
    if (fetchesAtc.test(text.replace(/["',\[\]\s]+/g, ' '))) offending.push(`${path.relative(root, file)}: (across lines)`);
    if (file.endsWith('.json') && configFetchesAtc(JSON.parse(text) as unknown)) offending.push(`${path.relative(root, file)}: an npx config entry runs atc`);
  }
  expect(offending).toEqual([]);
});

it('the scan catches the forms it must refuse and lets the safe ones through', () => {
  for (const bad of ['npx atc proxy', 'npx -y atc verify f', 'npm exec atc', 'pnpm dlx atc', 'bunx --no-install atc']) expect(fetchesAtc.test(bad)).toBe(true);
  for (const good of ['npx -y agent-tool-capabilities proxy', 'npx --package agent-tool-capabilities atc proxy', 'npx --no-install agent-tool-capabilities --version', 'atc verify f']) expect(fetchesAtc.test(good)).toBe(false);
  expect(configFetchesAtc({ mcpServers: { a: { command: 'npx', args: ['-y', 'atc', 'proxy'] } } })).toBe(true);
  expect(configFetchesAtc({ mcpServers: { a: { command: 'npx', args: ['-y', 'agent-tool-capabilities', 'proxy'] } } })).toBe(false);
});
