import { hasOwn, setOwn } from '../../src/domain/ownData';

// Untrusted keys stay plain own data (ownData.ts).
describe('setOwn', () => {
  it('sets __proto__ as an own enumerable, writable, configurable property, not the prototype', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(Object.keys(target)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(target, '__proto__')).toEqual({ value: { polluted: true }, enumerable: true, writable: true, configurable: true });
  });

  it('sets any other key by assignment', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, 'constructor', 1);
    setOwn(target, 'a', 2);
    expect(target).toEqual({ constructor: 1, a: 2 });
    expect(Object.keys(target)).toEqual(['constructor', 'a']);
  });
});

describe('hasOwn', () => {
  it('is true for own keys only, never for inherited members', () => {
    expect(hasOwn({ a: undefined }, 'a')).toBe(true);
    expect(hasOwn({}, 'constructor')).toBe(false);
    expect(hasOwn({}, 'toString')).toBe(false);
    expect(hasOwn(JSON.parse('{"__proto__": 1}') as object, '__proto__')).toBe(true);
  });
});
