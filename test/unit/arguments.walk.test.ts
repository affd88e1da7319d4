import { limits } from '../../src/domain/limits';
import { snapshotArguments } from '../../src/tools/arguments';

// The copy walk of src/tools/arguments.ts at its edges: which objects are plain, the depth and byte
// caps exactly at the limit, and what happens to values the walk refuses inside arrays and objects.

/** `levels` objects nested in one another: `{ d: { d: … {} } }`. */
function nestedObjects(levels: number): unknown {
  let value: unknown = {};
  for (let i = 1; i < levels; i++) value = { d: value };
  return value;
}

/** `{ a: [[…[]]] }` with `levels` arrays. */
function nestedArrays(levels: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < levels; i++) value = [value];
  return { a: value };
}

describe('argument snapshots: what is a plain object', () => {
  it('accepts an object with a null prototype', () => {
    const args = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(snapshotArguments(args)).toMatchObject({ ok: true, canonical: '{"a":1}' });
  });

  it('refuses a Date or a boxed number whose prototype was replaced by null', () => {
    expect(snapshotArguments({ d: Object.setPrototypeOf(new Date(0), null) }).ok).toBe(false);
    expect(snapshotArguments({ n: Object.setPrototypeOf(new Number(1), null) }).ok).toBe(false);
  });
});

describe('argument snapshots: depth cap', () => {
  it(`accepts objects nested ${limits.argumentDepthMax} deep and refuses one more level`, () => {
    expect(snapshotArguments(nestedObjects(limits.argumentDepthMax)).ok).toBe(true);
    expect(snapshotArguments(nestedObjects(limits.argumentDepthMax + 1)).ok).toBe(false);
  });

  it('counts nested arrays toward the depth like objects', () => {
    expect(snapshotArguments(nestedArrays(limits.argumentDepthMax - 1)).ok).toBe(true);
    expect(snapshotArguments(nestedArrays(limits.argumentDepthMax)).ok).toBe(false);
  });
});

describe('argument snapshots: byte cap', () => {
  it('accepts ASCII arguments of exactly the byte cap', () => {
    const overhead = Buffer.byteLength('{"s":""}');
    const snap = snapshotArguments({ s: 'x'.repeat(limits.argumentBytesMax - overhead) });
    expect(snap.ok && snap.bytes).toBe(limits.argumentBytesMax);
  });

  it('accepts an array of numbers whose canonical form is exactly the byte cap', () => {
    // `{"zz":[0,0,…]}`: 8 bytes around the items and their commas, 2 bytes an item.
    const zeros = new Array<number>((limits.argumentBytesMax - 8) / 2).fill(0);
    const snap = snapshotArguments({ zz: zeros });
    expect(snap.ok && snap.bytes).toBe(limits.argumentBytesMax);
  });

  it('refuses an array one byte too long for the cap without reading an item', () => {
    // `{"z":[…]}` with n one-byte items: 7 + 2n bytes, one over the cap.
    let gets = 0;
    const target = new Array<number>((limits.argumentBytesMax - 6) / 2).fill(0);
    const items = new Proxy(target, { get: (t, key, receiver) => (key !== 'length' && gets++, Reflect.get(t, key, receiver)) });
    expect(snapshotArguments({ z: items }).ok).toBe(false);
    expect(gets).toBe(0);
  });
});

describe('argument snapshots: members the walk refuses', () => {
  it('drops a member whose value is undefined, as JSON does', () => {
    expect(snapshotArguments({ a: undefined, b: 1 })).toMatchObject({ ok: true, canonical: '{"b":1}' });
  });

  it('refuses an array holding a value that is not JSON', () => {
    expect(snapshotArguments({ a: [1, () => 1] }).ok).toBe(false);
    expect(snapshotArguments({ a: [new Date(0)] }).ok).toBe(false);
  });

  it('refuses an array with a hole or an undefined item', () => {
    expect(snapshotArguments({ a: [1, undefined] }).ok).toBe(false);
    // eslint-disable-next-line no-sparse-arrays
    expect(snapshotArguments({ a: [1, , 2] }).ok).toBe(false);
  });
});
