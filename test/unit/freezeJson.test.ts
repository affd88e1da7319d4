import { freezeJson } from '../../src/domain/freezeJson';

describe('freezeJson', () => {
  it('freezes an object, its arrays and the objects inside them, and returns the same value', () => {
    const value = { a: { b: [1, { c: 'x' }] }, d: [[2]] };
    expect(freezeJson(value)).toBe(value);
    for (const part of [value, value.a, value.a.b, value.a.b[1], value.d, value.d[0]]) expect(Object.isFrozen(part)).toBe(true);
  });

  it('takes a value frozen already as frozen all the way down (as immer does)', () => {
    const inner = { n: 1 };
    const outer = Object.freeze({ inner });
    freezeJson({ outer });
    expect(Object.isFrozen(inner)).toBe(false);
  });

  it('returns primitives and null unchanged', () => {
    for (const value of [null, 0, 'text', true, undefined]) expect(freezeJson(value)).toBe(value);
  });

  it('walks own keys only', () => {
    const proto = { inherited: { n: 1 } };
    const value = Object.create(proto) as Record<string, unknown>;
    value.own = { n: 2 };
    freezeJson(value);
    expect(Object.isFrozen(value.own)).toBe(true);
    expect(Object.isFrozen(proto.inherited)).toBe(false);
  });
});
