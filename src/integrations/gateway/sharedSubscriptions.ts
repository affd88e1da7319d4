/**
 * Resource subscriptions on a shared (stdio) upstream, counted over the sessions holding them: the
 * upstream is subscribed when the first session subscribes and unsubscribed when the last one ends
 * its subscription (or closes), so one session never ends another's.
 */
export class SharedSubscriptions {
  private readonly holders = new Map<string, number>();

  /** Counts one more holder; true when it is the first (then the upstream is subscribed). */
  add(upstream: string, uri: string): boolean {
    const key = keyOf(upstream, uri);
    const count = this.holders.get(key) ?? 0;
    this.holders.set(key, count + 1);
    return count === 0;
  }

  /** Counts one holder less; true when it was the last (then the upstream is unsubscribed). */
  remove(upstream: string, uri: string): boolean {
    const key = keyOf(upstream, uri);
    const count = this.holders.get(key) ?? 0;
    if (count <= 1) {
      this.holders.delete(key);
      return count === 1;
    }
    this.holders.set(key, count - 1);
    return false;
  }
}

function keyOf(upstream: string, uri: string): string {
  return `${upstream}\n${uri}`;
}
