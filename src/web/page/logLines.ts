/** One event as the stream carries it: its seq and the stored body text (undefined when withheld). */
export interface ReceivedEvent {
  readonly seq: number;
  readonly text: string | undefined;
}

/**
 * Parses one data line of the server's `events` message (see the server's eventStream.ts):
 * `<seq> <body>`, `<seq> !<JSON string>` or `<seq> ?`. Undefined for a line that is none of these.
 */
export function parseDataLine(line: string): ReceivedEvent | undefined {
  const space = line.indexOf(' ');
  if (space < 1 || space > 16) return undefined;
  const seqText = line.slice(0, space);
  if (!/^\d+$/.test(seqText)) return undefined;
  const seq = Number(seqText);
  const rest = line.slice(space + 1);
  if (rest === '?') return { seq, text: undefined };
  if (!rest.startsWith('!')) return { seq, text: rest };
  try {
    const text: unknown = JSON.parse(rest.slice(1));
    return { seq, text: typeof text === 'string' ? text : undefined };
  } catch {
    return { seq, text: undefined };
  }
}

/** The lines of one message's data (the browser joins a message's data lines with `\n`). */
export function parseEventsData(data: string): ReceivedEvent[] {
  const events: ReceivedEvent[] = [];
  for (const line of data.split('\n')) {
    const event = parseDataLine(line);
    if (event !== undefined) events.push(event);
  }
  return events;
}
