/**
 * A FIFO ring buffer with a hard capacity: O(1) push and shift at any depth (an array with
 * `shift()` degrades to O(n) per dequeue past ~10^4 items).
 */
export class BoundedQueue<T> {
  private items: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.items = new Array<T | undefined>(Math.min(capacity, 1024));
  }

  get length(): number {
    return this.count;
  }

  /** Adds at the tail; false (and nothing added) when full. */
  push(item: T): boolean {
    if (this.count >= this.capacity) return false;
    this.forcePush(item);
    return true;
  }

  /** Adds at the tail even past capacity: for work that must not be dropped (settling admitted calls). */
  forcePush(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) % this.items.length] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.count--;
    return item;
  }

  private grow(): void {
    const next = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) % this.items.length];
    this.items = next;
    this.head = 0;
  }
}
