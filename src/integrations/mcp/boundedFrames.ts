import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { FrameSniffer, type FrameGist } from './frameSniffer';
import { printable } from '../../text/printable';

/** The largest message (one line, without its newline) read from a stdio peer: the SDK's own bound. */
export const frameBytesMax = 10 * 1024 * 1024;

export interface OversizedFrame extends FrameGist {
  /** Bytes the message had (counted while it was skipped). */
  readonly bytes: number;
}

type Queued = { readonly line: string } | { readonly oversized: OversizedFrame };

/**
 * The SDK's stdio `ReadBuffer` throws when a message passes 10 MiB, and its transports then close:
 * one oversized line from the client or the upstream ended the proxy, leaving every call in flight
 * unanswered. This buffer has the same interface but bounds each line instead: an oversized one
 * is skipped to its newline in constant memory (its id and kind read on the way) and handed to
 * `onOversized`; the lines around it are read as before.
 */
export class BoundedReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private skipping: { readonly sniffer: FrameSniffer; bytes: number } | undefined;
  private queue: Queued[] = [];

  constructor(private readonly onOversized: (frame: OversizedFrame) => void) {}

  append(chunk: Buffer): void {
    for (let start = 0; start < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  readMessage(): JSONRPCMessage | null {
    for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
      if ('line' in next) return deserializeMessage(next.line.replace(/\r$/, ''));
      this.onOversized(next.oversized);
    }
    return null;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
    this.queue = [];
  }

  private take(piece: Buffer): void {
    if (this.skipping !== undefined) {
      this.skipping.sniffer.feed(piece);
      this.skipping.bytes += piece.length;
      return;
    }
    if (this.size + piece.length <= frameBytesMax) {
      this.chunks.push(piece);
      this.size += piece.length;
      return;
    }
    // Over the bound: from here on the line is only read for its id, never kept.
    const sniffer = new FrameSniffer();
    for (const kept of this.chunks) sniffer.feed(kept);
    sniffer.feed(piece);
    this.skipping = { sniffer, bytes: this.size + piece.length };
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.skipping !== undefined) {
      this.queue.push({ oversized: { ...this.skipping.sniffer.gist(), bytes: this.skipping.bytes } });
      this.skipping = undefined;
      return;
    }
    this.queue.push({ line: Buffer.concat(this.chunks, this.size).toString('utf8') });
    this.chunks = [];
    this.size = 0;
  }
}

/**
 * Puts a `BoundedReadBuffer` in an SDK stdio transport (client or server side) and answers an
 * oversized message the way that keeps both sides going: a request gets a JSON-RPC error back
 * (its sender's call fails, nothing is forwarded); a response is replaced by an error response, so
 * the request of ours it answers fails (a proxied call is then settled `call.failed`); a
 * notification, or a message whose id cannot be read, is dropped. `report` says which.
 * The transport's read buffer is the SDK's private `_readBuffer` (1.x): if a later release renames
 * it, this returns false and changes nothing (test/regression/oversizedFrames.test.ts checks it).
 */
export function boundStdioFrames(transport: Transport, peer: string, report: (line: string) => void): boolean {
  const holder = transport as unknown as { _readBuffer?: unknown };
  const current = holder._readBuffer as { readonly append?: unknown; readonly readMessage?: unknown } | undefined;
  if (typeof current?.append !== 'function' || typeof current.readMessage !== 'function') return false;
  holder._readBuffer = new BoundedReadBuffer((frame) => {
    const id = printable(JSON.stringify(frame.id) ?? '');
    const what = `a message of ${frame.bytes} bytes from ${peer} (over the ${frameBytesMax}-byte limit)`;
    if (frame.kind === 'request' && frame.id !== undefined) {
      report(`refused ${what}: request ${id} answered with an error`);
      void transport.send({ jsonrpc: '2.0', id: frame.id, error: { code: ErrorCode.InvalidRequest, message: `message refused: over ${frameBytesMax} bytes` } }).catch(() => undefined);
    } else if (frame.kind === 'response' && frame.id !== undefined) {
      report(`refused ${what}: the request ${id} it answered fails`);
      transport.onmessage?.({ jsonrpc: '2.0', id: frame.id, error: { code: ErrorCode.InternalError, message: `${peer}'s response was over ${frameBytesMax} bytes` } });
    } else {
      report(`dropped ${what}: ${frame.kind === 'notification' ? 'a notification' : 'no request id could be read'}`);
    }
  });
  return true;
}
