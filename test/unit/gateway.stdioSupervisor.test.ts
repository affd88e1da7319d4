import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioSupervisor } from '../../src/integrations/gateway/stdioSupervisor';

// A shared stdio upstream that exits is restarted with exponential backoff; timers and clock injected.

interface FakeClient {
  onclose?: () => void;
  close(): Promise<void>;
}

function harness(): { supervisor: StdioSupervisor; started: FakeClient[]; delays: number[]; fire(): void; failNext: { value: boolean } } {
  const started: FakeClient[] = [];
  const delays: number[] = [];
  const pending: (() => void)[] = [];
  const failNext = { value: false };
  const connect = async (): Promise<Client> => {
    if (failNext.value) {
      failNext.value = false;
      throw new Error('spawn failed');
    }
    const client: FakeClient = { close: async () => client.onclose?.() };
    started.push(client);
    return client as unknown as Client;
  };
  const supervisor = new StdioSupervisor(connect, (callback, delayMs) => {
    delays.push(delayMs);
    pending.push(callback);
    return () => undefined;
  }, () => undefined, () => 0);
  return { supervisor, started, delays, failNext, fire: () => pending.shift()?.() };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('an upstream that exits is down at once, then restarted after 250 ms, 500 ms, … (doubling)', async () => {
  const h = harness();
  await h.supervisor.start();
  expect(h.supervisor.up()).toBe(true);
  h.started[0]?.onclose?.();
  expect(h.supervisor.up()).toBe(false);
  expect(h.delays).toEqual([250]);
  h.fire();
  await settle();
  expect(h.supervisor.up()).toBe(true);
  expect(h.started).toHaveLength(2);
  h.started[1]?.onclose?.();
  expect(h.delays).toEqual([250, 500]);
});

test('a restart that fails is retried with the next delay; close stops restarting', async () => {
  const h = harness();
  await h.supervisor.start();
  h.started[0]?.onclose?.();
  h.failNext.value = true;
  h.fire();
  await settle();
  expect(h.supervisor.up()).toBe(false);
  expect(h.delays).toEqual([250, 500]);
  await h.supervisor.close();
  h.fire();
  await settle();
  expect(h.started).toHaveLength(1);
  expect(h.supervisor.up()).toBe(false);
});
