/**
 * An AbortController made only when the tool reads `ctx.signal` (most tools never do, and creating
 * one costs about as much as hashing an event); an abort that comes first is remembered and applied.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private early: { readonly reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.early !== undefined) this.controller.abort(this.early.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller !== undefined ? this.controller.signal.aborted : this.early !== undefined;
  }

  abort(reason: unknown): void {
    if (this.controller !== undefined) this.controller.abort(reason);
    else this.early ??= { reason };
  }
}
