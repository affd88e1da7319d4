import fc from 'fast-check';
import { createLedger, replay, type JsonObject, type Ledger } from '../../src';
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson } from '../../src/domain/canonicalJson';
import { snapshotArguments } from '../../src/tools/arguments';
import { SchemaCompiler } from '../../src/tools/schemas';
import { manualClock, notesLedger } from '../support/fixtures';

// Regression (issue 10, defect 1): keys `__proto__`, `constructor` and `prototype` in arguments are
// plain own data, as JSON.parse makes them; the copy once assigned `__proto__` as the prototype, so
// its value escaped measurement and the undeclared-property rule while ajv and the tool read it.

const megabyte = 'x'.repeat(1_048_000);

async function grantFor(ledger: Ledger, tools: string[], budget = { calls: 10, inputBytes: 1_000 }): Promise<string> {
  const { token } = await ledger.issue({ tools, resources: ['notes:/drafts/'], expiresAt: manualClock().now() + 60_000, budget });
  return token;
}

const replayEqualsState = (ledger: Ledger): boolean => isDeepStrictEqual(replay(ledger.events()), ledger.state());

describe('regression: __proto__ in arguments', () => {
  it('measures a __proto__ member: 1 MB under it does not pass a 1,000-byte budget', async () => {
    const clock = manualClock();
    const { ledger, runs } = await notesLedger({ clock: clock.now });
    const token = await grantFor(ledger, ['notes.write']);
    const args = JSON.parse(`{"path":"drafts/a","text":"t","__proto__":{"text":"${megabyte}"}}`) as unknown;
    const outcome = await ledger.invoke(token, 'notes.write', args);
    expect(outcome.status).toBe('rejected');
    expect(runs).toEqual([]);
  });

  it('refuses __proto__ as an undeclared property (invalid_arguments), also with allOf', async () => {
    const ledger = createLedger({ clock: manualClock().now });
    const seen: unknown[] = [];
    await ledger.registerTool({
      name: 'composed',
      inputSchema: { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'string' } } }] },
      run: (args) => seen.push(args),
    });
    const token = await grantFor(ledger, ['composed']);
    const outcome = await ledger.invoke(token, 'composed', JSON.parse('{"a":"x","__proto__":{"c":"smuggled"}}'));
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(seen).toEqual([]);
  });

  it('hands constructor and prototype to the tool as own data, measured and validated', async () => {
    const ledger = createLedger({ clock: manualClock().now });
    const seen: JsonObject[] = [];
    await ledger.registerTool({
      name: 'classes',
      inputSchema: { type: 'object', properties: { constructor: { type: 'string' }, prototype: { type: 'object', properties: { n: { type: 'number' } } } }, required: ['constructor'] },
      run: (args) => { seen.push(args); },
    });
    const token = await grantFor(ledger, ['classes']);
    const text = '{"constructor":"Point","prototype":{"n":1}}';
    const outcome = await ledger.invoke(token, 'classes', JSON.parse(text));
    expect(outcome.status).toBe('completed');
    const received = seen[0] as JsonObject;
    expect(Object.keys(received).sort()).toEqual(['constructor', 'prototype']);
    expect(received.constructor).toBe('Point');
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
    const admitted = ledger.events().find((e) => e.type === 'call.admitted');
    expect(admitted?.type === 'call.admitted' && admitted.reserved.inputBytes).toBe(Buffer.byteLength(text));
    // Absent, `constructor` is not satisfied by the inherited Object function.
    expect(await ledger.invoke(token, 'classes', { prototype: { n: 1 } })).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
  });

  it('keeps __proto__ as an own property in the snapshot, with its prototype untouched', () => {
    const snap = snapshotArguments(JSON.parse('{"a":{"__proto__":{"polluted":true}}}'));
    expect(snap.ok).toBe(true);
    if (!snap.ok) return;
    const inner = snap.value.a as JsonObject;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.keys(inner)).toEqual(['__proto__']);
    expect((inner as { polluted?: unknown }).polluted).toBeUndefined();
    expect(snap.canonical).toBe('{"a":{"__proto__":{"polluted":true}}}');
  });

  it('writes a toJSON member in canonical key order (it is data, not a method)', () => {
    expect(canonicalJson(JSON.parse('{"toJSON":1,"b":{"z":1,"a":2},"a":0}'))).toBe('{"a":0,"b":{"a":2,"z":1},"toJSON":1}');
  });

  it('refuses a schema that names __proto__ (validators ignore it, so it would restrict nothing)', () => {
    const compiler = new SchemaCompiler();
    expect(() => compiler.compileNarrowing(JSON.parse('{"properties":{"__proto__":{"maxLength":1}}}'))).toThrow(/__proto__/);
    expect(() => compiler.compileToolSchema(JSON.parse('{"type":"object","required":["__proto__"]}'))).toThrow(/__proto__/);
  });

  it('registers and calls a tool named after an Object.prototype member', async () => {
    const ledger = createLedger({ clock: manualClock().now });
    for (const name of ['constructor', 'prototype', 'toString', '__proto__', 'hasOwnProperty']) {
      await ledger.registerTool({ name, inputSchema: { type: 'object' }, run: () => name });
    }
    const token = await grantFor(ledger, ['constructor', '__proto__']);
    expect(await ledger.invoke(token, 'constructor', {})).toMatchObject({ status: 'completed', value: 'constructor' });
    expect(await ledger.invoke(token, '__proto__', {})).toMatchObject({ status: 'completed', value: '__proto__' });
    expect(await ledger.invoke(token, 'prototype', {})).toMatchObject({ status: 'rejected', reason: 'tool_not_granted' });
    expect(await ledger.invoke(token, 'valueOf', {})).toMatchObject({ status: 'rejected', reason: 'unknown_tool' });
    expect(Object.keys(ledger.state().tools).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'prototype', 'toString']);
    expect(replayEqualsState(ledger)).toBe(true);
  });
});

// JSON text whose object keys are drawn mostly from names that are special in JavaScript.
const adversarialKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toJSON', 'toString', 'valueOf', 'hasOwnProperty'), fc.string({ maxLength: 4 }));
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; object: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.constant('null'), fc.boolean().map(String), fc.integer().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)), fc.string().map((s) => JSON.stringify(s))),
    tie('object'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  ),
  object: fc
    .uniqueArray(fc.tuple(adversarialKey, tie('value')), { maxLength: 4, selector: ([key]) => key })
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
})).object;

describe('property: input bytes are the canonical size of what the tool receives', () => {
  it('holds for JSON objects with adversarial keys at any depth', async () => {
    const ledger = createLedger({ clock: manualClock().now });
    let received: unknown;
    await ledger.registerTool({ name: 'any', inputSchema: { type: 'object', additionalProperties: true }, run: (args) => { received = args; } });
    const { token } = await ledger.issue({ tools: ['any'], expiresAt: manualClock().now() + 60_000, budget: { calls: 1_000_000, inputBytes: 1e12 } });
    await fc.assert(
      fc.asyncProperty(jsonText, async (text) => {
        const wire = JSON.parse(text) as unknown;
        received = undefined;
        const outcome = await ledger.invoke(token, 'any', wire);
        expect(outcome.status).toBe('completed');
        const admitted = ledger.events().at(-2);
        if (admitted?.type !== 'call.admitted') throw new Error('expected an admission');
        const bytes = Buffer.byteLength(canonicalJson(received), 'utf8');
        expect(admitted.reserved.inputBytes).toBe(bytes);
        // An oracle independent of our canonical writer: JSON.stringify differs only in key order.
        expect(bytes).toBe(Buffer.byteLength(JSON.stringify(wire), 'utf8'));
        expect(JSON.stringify(received).length).toBe(JSON.stringify(wire).length);
        expect(canonicalJson(received)).toBe(canonicalJson(wire));
      }),
      { numRuns: 300 },
    );
  });
});
