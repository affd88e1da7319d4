/** What can be told of a JSON-RPC message too large to parse: its id and whether it has a method. */
export interface FrameGist {
  readonly id: string | number | undefined;
  /** request: method and id; notification: method, no id; response: id, no method; unknown: neither. */
  readonly kind: 'request' | 'notification' | 'response' | 'unknown';
}

const keyBytesMax = 8;
const idBytesMax = 258; // a quoted id of 256 characters

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Reads the top-level `"id"` and `"method"` keys of a JSON object streamed through it byte by byte,
 * in constant memory, without building the value: the id of an oversized message (which the SDK
 * writes last in a response) is what lets the proxy answer or fail the one request it belongs to.
 * Best effort on text that may not be JSON at all: whatever it cannot read is left `undefined`.
 */
export class FrameSniffer {
  private depth = 0;
  private started = false;
  private notObject = false;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private readingKey = false;
  private key: number[] = [];
  private keyTooLong = false;
  private currentKey: string | undefined;
  private awaitingValue = false;
  private capturing: number[] | undefined;
  private capturedTooLong = false;
  private idText: string | undefined;
  private sawMethod = false;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.byte(bytes[i] as number);
  }

  gist(): FrameGist {
    this.endCapture();
    const id = this.notObject ? undefined : parseId(this.idText);
    const kind = this.sawMethod && !this.notObject ? (id !== undefined ? 'request' : 'notification') : id !== undefined ? 'response' : 'unknown';
    return { id, kind };
  }

  private byte(b: number): void {
    if (this.notObject) return;
    if (this.inString) return this.stringByte(b);
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) {
      if (this.capturing !== undefined && !this.capturingString()) this.endCapture();
      return;
    }
    if (!this.started) {
      this.started = true;
      if (b !== 0x7b) this.notObject = true;
      else {
        this.depth = 1;
        this.expectKey = true;
      }
      return;
    }
    if (this.awaitingValue && this.depth === 1) {
      this.awaitingValue = false;
      if (this.currentKey === 'method') this.sawMethod = true;
      if (this.currentKey === 'id') this.capturing = [];
    }
    if (this.capturing !== undefined && this.depth === 1 && (b === 0x2c || b === 0x7d)) this.endCapture();
    this.capture(b);
    if (b === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) {
        this.readingKey = true;
        this.key = [];
        this.keyTooLong = false;
      }
      return;
    }
    if (b === 0x7b || b === 0x5b) this.depth++;
    else if (b === 0x7d || b === 0x5d) this.depth--;
    else if (this.depth === 1 && b === 0x3a) this.awaitingValue = true;
    else if (this.depth === 1 && b === 0x2c) this.expectKey = true;
  }

  private stringByte(b: number): void {
    this.capture(b);
    if (this.escaped) {
      this.escaped = false;
      this.keyByte(b);
      return;
    }
    if (b === BACKSLASH) {
      this.escaped = true;
      this.keyByte(b);
      return;
    }
    if (b !== QUOTE) return this.keyByte(b);
    this.inString = false;
    if (this.readingKey) {
      this.readingKey = false;
      this.expectKey = false;
      this.currentKey = this.keyTooLong ? undefined : Buffer.from(this.key).toString('latin1');
    } else if (this.capturingString()) this.endCapture();
  }

  private keyByte(b: number): void {
    if (!this.readingKey) return;
    if (this.key.length >= keyBytesMax) this.keyTooLong = true;
    else this.key.push(b);
  }

  private capture(b: number): void {
    if (this.capturing === undefined) return;
    if (this.capturing.length >= idBytesMax) this.capturedTooLong = true;
    else this.capturing.push(b);
  }

  private capturingString(): boolean {
    return this.capturing !== undefined && this.capturing[0] === QUOTE;
  }

  private endCapture(): void {
    if (this.capturing === undefined) return;
    this.idText = this.capturedTooLong ? undefined : Buffer.from(this.capturing).toString('utf8');
    this.capturing = undefined;
    this.capturedTooLong = false;
  }
}

/** A JSON-RPC id as MCP allows it: a string, or an integer. Anything else is no id. */
function parseId(text: string | undefined): string | number | undefined {
  if (text === undefined) return undefined;
  if (/^-?(0|[1-9][0-9]{0,15})$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  if (!text.startsWith('"')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
