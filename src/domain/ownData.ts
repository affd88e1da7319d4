/**
 * Sets `key` on `target` as an own, enumerable data property, as JSON.parse does. Plain assignment
 * would treat `__proto__` as the prototype setter: the value would vanish from `Object.keys`,
 * canonical JSON and size checks while every read (a validator's, a tool's) still sees it inherited.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Whether `key` is an own property of `target` (never an inherited member such as `constructor`). */
export function hasOwn(target: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(target, key);
}
