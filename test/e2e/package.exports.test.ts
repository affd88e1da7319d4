import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeConsumerProject, packageRoot as root, removeConsumerProject } from '../support/consumerProject';

// Loads the built package by its npm name, as a user would, from a scratch project that links it.
let project: string;

beforeAll(() => {
  project = makeConsumerProject('atc-consumer-');
});

afterAll(() => removeConsumerProject(project));

function node(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8' });
}

const surface = ['createLedger', 'replay', 'verify', 'memoryStore', 'LedgerError'];

it('loads with require()', () => {
  const r = node(['-e', `const m = require('agent-tool-capabilities'); console.log(${JSON.stringify(surface)}.map((k) => typeof m[k]).join(','))`]);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('function,function,function,function,function');
});

it('loads with import()', () => {
  const r = node(['--input-type=module', '-e', `const m = await import('agent-tool-capabilities'); console.log(${JSON.stringify(surface)}.map((k) => typeof m[k]).join(','))`]);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('function,function,function,function,function');
});

it('ships typings for the entry point', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: { '.': { types: string } }; bin: { atc: string } };
  expect(fs.existsSync(path.join(root, pkg.exports['.'].types))).toBe(true);
  expect(fs.readFileSync(path.join(root, pkg.bin.atc), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
});

it('runs the atc binary and lists its commands', () => {
  const r = node([path.join(root, 'dist/src/cli/main.js'), '--help']);
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('usage: atc');
});

describe('the agent-tool-capabilities/postgres subpath', () => {
  it('loads postgresStore with require() and import()', () => {
    const cjs = node(['-e', `const m = require('agent-tool-capabilities/postgres'); console.log(typeof m.postgresStore)`]);
    expect(cjs.stderr).toBe('');
    expect(cjs.stdout.trim()).toBe('function');
    const esm = node(['--input-type=module', '-e', `const m = await import('agent-tool-capabilities/postgres'); console.log(typeof m.postgresStore)`]);
    expect(esm.stderr).toBe('');
    expect(esm.stdout.trim()).toBe('function');
  });

  it('keeps pg out of the root entry, which still offers openLedger', () => {
    const r = node(['-e', `const m = require('agent-tool-capabilities'); const pg = Object.keys(require.cache).filter((k) => /node_modules[\\\\/]pg[\\\\/]/.test(k)); console.log(typeof m.openLedger, pg.length)`]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('function 0');
  });

  it('ships typings for the subpath', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: { './postgres': { types: string } } };
    const typings = fs.readFileSync(path.join(root, pkg.exports['./postgres'].types), 'utf8');
    expect(typings).toContain('postgresStore');
  });
});

it('the root import loads no better-sqlite3 until sqliteStore is first called, and no pg, OpenTelemetry, web or experiments code', () => {
  const probe = `
    const has = (re) => Object.keys(require.cache).some((f) => re.test(f));
    const seen = () => ({ sqlite: has(/[\\\\/]node_modules[\\\\/]better-sqlite3[\\\\/]/), pg: has(/[\\\\/]node_modules[\\\\/]pg[\\\\/]/), otel: has(/@opentelemetry/), web: has(/[\\\\/]dist[\\\\/](src[\\\\/])?web[\\\\/]/), experiments: has(/[\\\\/]experiments[\\\\/]/) });
    const m = require('agent-tool-capabilities');
    const before = seen();
    const store = m.sqliteStore({ path: ':memory:' });
    const after = seen();
    store.close();
    console.log(JSON.stringify({ before, after }));`;
  const r = node(['-e', probe]);
  expect(r.stderr).toBe('');
  const { before, after } = JSON.parse(r.stdout) as { before: Record<string, boolean>; after: Record<string, boolean> };
  expect(before).toEqual({ sqlite: false, pg: false, otel: false, web: false, experiments: false });
  expect(after).toMatchObject({ sqlite: true, pg: false });
});

it('loads neither the MCP SDK nor the AI SDK with the root import', () => {
  const probe = `require('agent-tool-capabilities'); const loaded = Object.keys(require.cache); console.log(JSON.stringify({ mcp: loaded.some((f) => f.includes('@modelcontextprotocol')), ai: loaded.some((f) => /[\\\\/]node_modules[\\\\/](ai|@ai-sdk)[\\\\/]/.test(f)), count: loaded.length }))`;
  const r = node(['-e', probe]);
  expect(r.stderr).toBe('');
  const seen = JSON.parse(r.stdout) as { mcp: boolean; ai: boolean; count: number };
  expect(seen.count).toBeGreaterThan(1);
  expect(seen).toMatchObject({ mcp: false, ai: false });
});

describe.each([
  ['agent-tool-capabilities/mcp', 'ledgerMcpTools'],
  ['agent-tool-capabilities/ai-sdk', 'ledgerTools'],
  ['agent-tool-capabilities/otel', 'instrumentLedger'],
])('the %s subpath', (subpath, name) => {
  it('loads with require() and import()', () => {
    const cjs = node(['-e', `const m = require('${subpath}'); console.log(typeof m.${name})`]);
    expect(cjs.stderr).toBe('');
    expect(cjs.stdout.trim()).toBe('function');
    const esm = node(['--input-type=module', '-e', `const m = await import('${subpath}'); console.log(typeof m.${name})`]);
    expect(esm.stderr).toBe('');
    expect(esm.stdout.trim()).toBe('function');
  });

  it('ships typings', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    const entry = pkg.exports[`./${subpath.split('/')[1] as string}`] as { types: string };
    expect(fs.readFileSync(path.join(root, entry.types), 'utf8')).toContain(name);
  });
});
