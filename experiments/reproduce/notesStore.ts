import { canonicalJson, sha256Hex } from '../../src';

/** One change a tool made to the store, attributed to the call that made it. */
export interface NoteEffect {
  readonly callId: string;
  readonly kind: 'write' | 'delete';
}

/**
 * The synthetic notes store the experiment's tools act on: a map from path to text, plus the list
 * of effects (which call changed it) so the evidence can match effects to admissions.
 */
export class NotesStore {
  private readonly notes = new Map<string, string>();
  private readonly effectLog: NoteEffect[] = [];
  private readonly runLog: string[] = [];

  constructor(seed: { readonly [path: string]: string } = {}) {
    for (const [path, text] of Object.entries(seed)) this.notes.set(path, text);
  }

  get size(): number {
    return this.notes.size;
  }

  get effects(): readonly NoteEffect[] {
    return this.effectLog;
  }

  /** Call ids of every tool run that started, in order (rejected calls must never appear). */
  get runs(): readonly string[] {
    return this.runLog;
  }

  recordRun(callId: string): void {
    this.runLog.push(callId);
  }

  /** SHA-256 of the sorted contents: equal digests mean an untouched store. */
  digest(): string {
    const entries = Array.from(this.notes.entries()).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return sha256Hex(canonicalJson(entries));
  }

  /** Paths strictly below `dir/`. */
  list(dir: string): string[] {
    const prefix = `${dir}/`;
    return Array.from(this.notes.keys()).filter((p) => p.startsWith(prefix)).sort();
  }

  read(path: string): string | null {
    return this.notes.get(path) ?? null;
  }

  write(callId: string, path: string, text: string): void {
    this.notes.set(path, text);
    this.effectLog.push({ callId, kind: 'write' });
  }

  delete(callId: string, path: string): boolean {
    const existed = this.notes.delete(path);
    if (existed) this.effectLog.push({ callId, kind: 'delete' });
    return existed;
  }
}
