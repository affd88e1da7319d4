import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** Schedules `callback` after `delayMs`; returns a cancel function (tests inject one). */
export type SetTimer = (callback: () => void, delayMs: number) => () => void;

export const systemSetTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

export const restartDelayMsMin = 250;
export const restartDelayMsMax = 30_000;

/**
 * One stdio upstream shared by every session: started once, restarted with exponential backoff
 * (250 ms doubling to 30 s, reset by a connection that lived a minute) when it exits. When it exits
 * the SDK client rejects the requests in flight, so their calls fail and are settled `call.failed`;
 * until it is back, calls fail at once (nothing is queued or re-sent).
 */
export class StdioSupervisor {
  private current: Client | undefined;
  private delayMs = restartDelayMsMin;
  private cancelRestart: (() => void) | undefined;
  private stopped = false;
  private connectedAt = 0;

  constructor(
    private readonly connect: () => Promise<Client>,
    private readonly setTimer: SetTimer = systemSetTimer,
    private readonly report: (line: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The first start: a failure here fails the gateway's start. */
  async start(): Promise<Client> {
    const client = await this.connect();
    this.adopt(client);
    return client;
  }

  /** The running client, or undefined while the upstream is down. */
  client(): Client | undefined {
    return this.current;
  }

  up(): boolean {
    return this.current !== undefined;
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.cancelRestart?.();
    const client = this.current;
    this.current = undefined;
    await client?.close().catch(() => undefined);
  }

  private adopt(client: Client): void {
    this.current = client;
    this.connectedAt = this.now();
    client.onclose = () => {
      if (this.current !== client) return;
      this.current = undefined;
      if (!this.stopped) this.scheduleRestart();
    };
  }

  private scheduleRestart(): void {
    if (this.now() - this.connectedAt >= 60_000) this.delayMs = restartDelayMsMin;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, restartDelayMsMax);
    this.report(`upstream exited; restarting in ${delay} ms`);
    this.cancelRestart = this.setTimer(() => {
      this.cancelRestart = undefined;
      if (this.stopped) return;
      this.connect().then(
        (client) => {
          if (this.stopped) void client.close().catch(() => undefined);
          else {
            this.adopt(client);
            this.report('upstream restarted');
          }
        },
        () => {
          if (!this.stopped) this.scheduleRestart();
        },
      );
    }, delay);
  }
}
