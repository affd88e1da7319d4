#!/usr/bin/env node
// Moves test files standing at test/ root into their tier's folder (docs/testing.md, "Tiers") and
// re-paths everything that names them. Idempotent: files already in a tier folder are left alone, so
// it can be run again after someone adds a test at the root.
//   node scripts/testTiers.mjs            move (git mv) and rewrite
//   node scripts/testTiers.mjs --dry-run  print the moves only
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dryRun = process.argv.includes('--dry-run');

/** A file that runs other processes, serves or fetches over HTTP, or drives a browser. */
const e2eContent = /node:child_process|from 'child_process'|\bspawn\(|\bexecFile(Sync)?\(|\bfork\(|node:http\b|createServer\(|\bchromium\b|playwright|listen\(0\b|new Worker\(/;
/** A file that runs code of experiments/ (reproducer, AgentDojo, bench, mutation, conformance). */
const labContent = /from '\.\.\/experiments\/|import\('\.\.\/experiments\/|require\('\.\.\/experiments\//;

/** The tier of a test file at test/ root, and its name there (the tier's suffix or prefix dropped). */
export function tierOf(name, text, forced) {
  const drop = (re) => name.replace(re, '.test.ts');
  if (forced !== undefined) return [forced, forced === 'regression' && name.startsWith('regression.') ? name.slice('regression.'.length) : drop(/\.(unit|int|e2e|browser|property|properties)\.test\.ts$/)];
  if (name.startsWith('regression.')) return ['regression', name.slice('regression.'.length)];
  if (labContent.test(text) || /^(experiment|agentdojo|mutation|bench|reproduce)\./.test(name) || /conformance/i.test(name)) return ['lab', drop(/\.(unit|int|e2e)\.test\.ts$/)];
  if (/\.(e2e|browser)\.test\.ts$/.test(name)) return ['e2e', drop(/\.(e2e|browser)\.test\.ts$/)];
  if (/^(sqlite|postgres)[.A-Z]|\.(sqlite|postgres)\.|^storeContract\./.test(name)) return ['stores', name === 'storeContract.test.ts' ? 'contract.test.ts' : drop(/\.(unit|int)\.test\.ts$/)];
  if (/\.(property|properties)\.test\.ts$/.test(name)) return ['property', drop(/\.(property|properties)\.test\.ts$/)];
  if (/\.unit\.test\.ts$/.test(name)) return ['unit', drop(/\.unit\.test\.ts$/)];
  if (/\.int\.test\.ts$/.test(name)) return ['integration', drop(/\.int\.test\.ts$/)];
  return [e2eContent.test(text) ? 'e2e' : 'integration', name];
}

function git(...args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' });
}

/** Old → new paths from the repository root, for every test file at test/ root. */
function plan() {
  const moves = new Map();
  const taken = new Set();
  for (const name of readdirSync(path.join(root, 'test')).sort()) {
    if (!name.endsWith('.test.ts') || !statSync(path.join(root, 'test', name)).isFile()) continue;
    const [tier, renamed] = tierOf(name, readFileSync(path.join(root, 'test', name), 'utf8'));
    const target = `test/${tier}/${renamed}`;
    if (taken.has(target) || statExists(target)) throw new Error(`two tests would be ${target}: rename one first`);
    taken.add(target);
    moves.set(`test/${name}`, target);
  }
  return moves;
}

function statExists(file) {
  try {
    statSync(path.join(root, file));
    return true;
  } catch {
    return false;
  }
}

function moduleExists(target, moves) {
  const candidates = ['', '.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts', '/index.ts', '/index.js'].map((ending) => `${target}${ending}`);
  return candidates.some((file) => moves.has(file) || (statExists(file) && (file !== target || statSync(path.join(root, file)).isFile() || statExists(`${file}/index.ts`) || statExists(`${file}/index.js`))));
}

/** A moved file's own relative paths, one folder deeper: imports, jest.mock, require, __dirname joins. */
function repathMoved(text, oldFile, newFile, moves) {
  const oldDir = path.posix.dirname(oldFile);
  const newDir = path.posix.dirname(newFile);
  const specifier = /((?:from|import|require|jest\.mock|require\.resolve)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;
  let out = text.replace(specifier, (whole, head, quote, spec) => {
    const target = path.posix.normalize(path.posix.join(oldDir, spec));
    // Only a module that exists: a specifier in a test's own data (a string it parses) stays as written.
    if (!moduleExists(target, moves)) return whole;
    const moved = moves.get(`${target}.ts`) ?? moves.get(target);
    const resolved = moved === undefined ? target : moved.replace(/\.ts$/, target.endsWith('.ts') ? '.ts' : '');
    let relative = path.posix.relative(newDir, resolved);
    if (!relative.startsWith('.')) relative = `./${relative}`;
    return `${head}${quote}${relative}${quote}`;
  });
  out = out.replace(/\b(join|resolve)\(__dirname,/g, "$1(__dirname, '..',");
  return out;
}

/** Names of moved files anywhere in a text: `test/old` → `test/new`, a bare `old` → `test/new`. */
function renameMentions(text, moves) {
  let out = text;
  for (const [oldFile, newFile] of moves) {
    const bare = oldFile.slice('test/'.length);
    out = out.split(oldFile).join(newFile);
    out = out.replace(new RegExp(`(^|[^\\w./-])${bare.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'g'), `$1${newFile}`);
  }
  return out;
}

// A glob over test file names as a regular expression: `*` within one folder, a leading `**` and slash anywhere.
function globRegex(glob) {
  const escaped = glob.replace(/^\*\*\//, '').replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  return new RegExp('(^|/)' + escaped + '$');
}

/**
 * The jest testMatch globs of stryker.config.json, re-pathed: a glob becomes the same glob in each
 * tier folder its files moved to (the tier's suffix dropped) where that matches exactly those files,
 * and otherwise the files' new paths.
 */
function repathGlobs(config, moves, after) {
  const parsed = JSON.parse(config);
  const globs = parsed.jest?.config?.testMatch;
  if (!Array.isArray(globs)) return config;
  parsed.jest.config.testMatch = globs.flatMap((glob) => {
    const matched = [...moves.keys()].filter((f) => globRegex(glob).test(f));
    if (matched.length === 0) return [glob];
    const byTier = new Map();
    for (const f of matched.map((m) => moves.get(m))) byTier.set(f.split('/')[1], [...(byTier.get(f.split('/')[1]) ?? []), f]);
    return [...byTier].flatMap(([tier, files]) => {
      const base = glob.slice(glob.lastIndexOf('/') + 1);
      const renamed = tierOf(base, '', tier)[1];
      const candidate = `**/test/${tier}/${renamed}`;
      const hits = after.filter((f) => globRegex(candidate).test(f));
      const exact = hits.length === files.length && files.every((f) => hits.includes(f));
      return exact ? [candidate] : files.map((f) => `**/${f}`);
    });
  });
  return `${JSON.stringify(parsed, null, 2)}\n`;
}

function main() {
  const moves = plan();
  for (const [from, to] of moves) console.log(`${from} -> ${to}`);
  if (dryRun || moves.size === 0) return;
  const tracked = git('ls-files').split('\n').filter((f) => f !== '' && f !== 'package-lock.json' && !f.startsWith('node_modules/'));
  const text = new Map();
  for (const file of tracked) {
    if (!statExists(file)) continue;
    const content = readFileSync(path.join(root, file));
    if (content.includes(0) || content.length > 4_000_000) continue;
    text.set(file, content.toString('utf8'));
  }
  for (const [from, to] of moves) {
    mkdirSync(path.join(root, path.dirname(to)), { recursive: true });
    git('mv', from, to);
    text.set(to, repathMoved(text.get(from), from, to, moves));
    text.delete(from);
  }
  const after = git('ls-files', 'test').split('\n').filter((f) => f.endsWith('.test.ts'));
  for (const [file, content] of text) {
    if (file === 'scripts/testTiers.mjs') continue;
    let next = file === 'stryker.config.json' ? repathGlobs(content, moves, after) : content;
    next = renameMentions(next, moves);
    if (next !== content || [...moves.values()].includes(file)) writeFileSync(path.join(root, file), next);
  }
}

main();
