import type { ServerResponse } from 'node:http';
import { storedBodyBytesMax, type LogReader, type StoredBody } from './logReader';

/** Events read per query and sent per Server-Sent Events message. */
export const streamPageEventsMax = 500;

export interface StreamTiming {
  /** How often an idle stream looks for appended events (other processes' appends show within it). */
  readonly pollMs: number;
  /** Comment lines keep proxies and the browser from closing an idle stream. */
  readonly keepAliveMs: number;
}

/**
 * One data line per event: `<seq> <body>` with the stored body as it is; a body that a data line
 * cannot carry verbatim (a line break, or a leading `!`) goes JSON-quoted as `<seq> !"…"`; one over
 * the bound (which a reader withholds, and which is checked again here) as `<seq> ?`. The page
 * re-hashes exactly the text it receives.
 */
export function dataLine(row: StoredBody): string {
  const { body } = row;
  if (typeof body !== 'string' || Buffer.byteLength(body) > storedBodyBytesMax) return `${row.seq} ?`;
  if (body.startsWith('!') || /[\r\n]/.test(body)) return `${row.seq} !${JSON.stringify(body)}`;
  return `${row.seq} ${body}`;
}

/** One `events` message: its id is the last seq, so a reconnecting EventSource resumes after it. */
export function eventsMessage(rows: readonly StoredBody[]): string {
  const last = rows[rows.length - 1] as StoredBody;
  return `event: events\nid: ${last.seq}\n${rows.map((r) => `data: ${dataLine(r)}\n`).join('')}\n`;
}

/**
 * Streams the log to one client from `after` on: the backlog page by page (waiting for the socket
 * to drain, so a long log is never buffered whole), a `caughtUp` message at the head, then every
 * event appended later, by this or any other process. Ends when `signal` aborts.
 */
export async function streamLog(reader: LogReader, res: ServerResponse, after: number, timing: StreamTiming, signal: AbortSignal): Promise<void> {
  let cursor = after;
  let caughtUp = false;
  let lastWrite = Date.now();
  const write = async (text: string): Promise<void> => {
    lastWrite = Date.now();
    if (!res.write(text)) await waitFor(res, 'drain', signal);
  };
  await write(`retry: 1000\n\n`);
  while (!signal.aborted) {
    const rows = await reader.bodiesAfter(cursor, streamPageEventsMax);
    if (signal.aborted) return;
    if (rows.length > 0) {
      await write(eventsMessage(rows));
      cursor = (rows[rows.length - 1] as StoredBody).seq;
      if (rows.length === streamPageEventsMax) continue;
    }
    if (!caughtUp) {
      caughtUp = true;
      await write(`event: caughtUp\ndata: {"headSeq":${cursor}}\n\n`);
    } else if (Date.now() - lastWrite >= timing.keepAliveMs) await write(': keep-alive\n\n');
    await delay(timing.pollMs, signal);
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function waitFor(res: ServerResponse, event: 'drain', signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off(event, done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on(event, done);
    signal.addEventListener('abort', done, { once: true });
  });
}
