import { currentRelay, runWithRelay, type CallRelay } from '../../src/integrations/mcp/callRelay';

const relayFor = (progressToken: string | undefined): CallRelay => ({ progressToken, sendNotification: async () => undefined });

/** A stand-in for `ledger.invoke`: the tool's run happens after the decision's awaits, then waits for `release`. */
function fakeInvoke(release: Promise<void>): { invoke: () => Promise<CallRelay | undefined>; seen: () => CallRelay | undefined } {
  let seen: CallRelay | undefined;
  const invoke = async (): Promise<CallRelay | undefined> => {
    await Promise.resolve();
    await new Promise<void>((resolve) => setImmediate(resolve));
    seen = currentRelay();
    await release;
    return currentRelay();
  };
  return { invoke, seen: () => seen };
}

describe('the relay a proxied tool run reads', () => {
  it('reaches the run, across awaits, when the client asked for progress', async () => {
    const relay = relayFor('p-1');
    const call = fakeInvoke(Promise.resolve());
    expect(await runWithRelay(relay, call.invoke)).toBe(relay);
    expect(call.seen()).toBe(relay);
  });

  it('is absent when the request carries no progress token (nothing to relay)', async () => {
    const call = fakeInvoke(Promise.resolve());
    expect(await runWithRelay(relayFor(undefined), call.invoke)).toBeUndefined();
  });

  it('stays with each of two overlapping calls when the first one ends first', async () => {
    let releaseSecond!: () => void;
    const first = relayFor('p-first');
    const second = relayFor('p-second');
    const a = fakeInvoke(Promise.resolve());
    const b = fakeInvoke(new Promise<void>((resolve) => (releaseSecond = resolve)));
    const running = runWithRelay(second, b.invoke);
    expect(await runWithRelay(first, a.invoke)).toBe(first);
    releaseSecond();
    expect(await running).toBe(second);
    expect(b.seen()).toBe(second);
  });

  it('does not leak a relay into a call without progress that runs beside one with it', async () => {
    let release!: () => void;
    const withProgress = fakeInvoke(new Promise<void>((resolve) => (release = resolve)));
    const running = runWithRelay(relayFor('p-1'), withProgress.invoke);
    const plain = fakeInvoke(Promise.resolve());
    expect(await runWithRelay(relayFor(undefined), plain.invoke)).toBeUndefined();
    release();
    await running;
  });

  it('is enabled again for a call after every earlier one ended', async () => {
    await runWithRelay(relayFor('p-1'), fakeInvoke(Promise.resolve()).invoke);
    const relay = relayFor('p-2');
    expect(await runWithRelay(relay, fakeInvoke(Promise.resolve()).invoke)).toBe(relay);
    expect(currentRelay()).toBeUndefined();
  });
});
