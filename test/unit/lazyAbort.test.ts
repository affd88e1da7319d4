import { LazyAbort } from '../../src/stream/lazyAbort';

describe('LazyAbort (the tool context signal, created on first read)', () => {
  it('hands out an already aborted signal, with the reason, when the abort came before the first read', () => {
    const lazy = new LazyAbort();
    const reason = new Error('revoked');
    lazy.abort(reason);
    expect(lazy.aborted).toBe(true);
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe(reason);
  });

  it('aborts a signal read earlier, once, keeping the first reason', () => {
    const lazy = new LazyAbort();
    const signal = lazy.signal;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    lazy.abort('first');
    lazy.abort('second');
    expect(seen).toEqual(['first']);
    expect(lazy.signal).toBe(signal);
  });

  it('is not aborted until abort is called', () => {
    const lazy = new LazyAbort();
    expect(lazy.aborted).toBe(false);
    expect(lazy.signal.aborted).toBe(false);
  });
});
