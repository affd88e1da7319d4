import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { reproduce } from '../../experiments/reproduce/reproduce';
import { argumentMarker, sequentialCases } from '../../src/evidence/sequentialCases';
import { raceArgs } from '../../experiments/reproduce/raceProtocol';
import { evidenceSchemaVersion, type Evidence } from '../../src/evidence/types';

let evidence: Evidence;
let text: string;
beforeAll(async () => {
  evidence = await reproduce();
  text = JSON.stringify(evidence);
});

function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}

describe('the evidence file', () => {
  it('holds no bearer token (issued or forged)', () => {
    expect(text).not.toMatch(/atc_[A-Za-z0-9_-]{43}/);
  });

  it('holds no argument value of any case or concurrency attempt', () => {
    const values = [...sequentialCases.flatMap((c) => stringsIn(c.args)), ...stringsIn(raceArgs(0, 0)), ...stringsIn(raceArgs(7, 7))];
    expect(values.length).toBeGreaterThan(30);
    for (const value of values) expect(value).toContain(argumentMarker);
    expect(text.toLowerCase()).not.toContain(argumentMarker);
  });

  it('records schema version, UTC date, git revision, hardware and one decision per case', () => {
    expect(evidence.schemaVersion).toBe(evidenceSchemaVersion);
    expect(evidence.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(evidence.revision.commit).toMatch(/^[0-9a-f]{40}$/); // the project is developed in git
    expect(typeof evidence.revision.dirty).toBe('boolean');
    expect(evidence.hardware.cpuCount).toBeGreaterThan(0);
    expect(evidence.hardware.node).toBe(process.version);
    expect(evidence.cases.map((c) => c.name)).toEqual(sequentialCases.map((c) => c.name));
  });

  it('hashes the source files as they are on disk', () => {
    const root = path.resolve(__dirname, '..', '..');
    for (const file of ['src/index.ts', 'experiments/reproduce/reproduce.ts', 'package.json']) {
      expect(evidence.sourceHashes[file]).toBe(createHash('sha256').update(readFileSync(path.join(root, file))).digest('hex'));
    }
    expect(Object.keys(evidence.sourceHashes).some((p) => p.startsWith('node_modules') || p.startsWith('dist'))).toBe(false);
  });
});
