import type { FileHandle } from 'node:fs/promises';
import { CheckedFs, type CheckedFsHooks, type CheckedOpenFlags } from './fs/checkedFs';
import { collectFsChecks, type FsCheck } from './fs/fsChecks';
import type { HopFacts } from '../domain/fetchHop';
import type { MeterAmounts } from '../domain/events';
import { meterAmountsSnapshot } from '../domain/meters';
import { ResourceRefusedError } from './resourceRefusedError';
import { checkedFetch, type CheckedFetchInit, type HopGate } from './url/checkedFetch';
import type { CallHops, CheckedResources, ResourceRefusalCode, RunningToolContext, ToolResources } from '../stream/ports/toolResources';

export type { CheckedResources };

export const noCheckedResources: CheckedResources = Object.freeze({ resources: Object.freeze([]), fsChecks: Object.freeze([]) });

/** What the ledger lends every call's context: the grant's scopes, hop decisions through the log, the resolver. */
export interface LedgerHops extends CallHops {
  readonly fsHooks?: CheckedFsHooks;
}

/**
 * A running call's context: `signal`, ids, and the resource helpers (`ctx.open`, `ctx.fetch`…),
 * whose file state is made only when the tool first uses one. Its authority ends with the call: once
 * `end()` is called every helper and `report` refuse, and once the signal is aborted every helper
 * does (a tool may keep its context, or run on after a timeout).
 */
export class ToolCallContext implements HopGate, RunningToolContext {
  private files: CheckedFs | undefined;
  private ended = false;
  /** The tool's last `report(usage)`: a frozen copy, read when the call settles. */
  reported: MeterAmounts | undefined;

  constructor(
    readonly callId: string,
    readonly grantId: string,
    private readonly abort: { readonly signal: AbortSignal; readonly aborted: boolean },
    private readonly checked: CheckedResources,
    private readonly hops: LedgerHops,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The ledger decided the call's outcome (the tool returned or threw, or it timed out): no more authority. */
  end(): void {
    this.ended = true;
  }

  /** `call_not_running` once ended; the abort reason once aborted (as `signal.throwIfAborted()`, and `ctx.fetch`). */
  private ensureRunning(): void {
    if (this.ended) throw new ResourceRefusedError('call_not_running');
    if (this.abort.aborted) this.signal.throwIfAborted();
  }

  /** HopGate: the scopes of this call's grant. */
  scopes(): readonly string[] {
    return this.hops.scopesOf(this.grantId);
  }

  /** HopGate: decided by the ledger and logged as `fetch.hop`. */
  decide(facts: HopFacts): Promise<'allowed' | ResourceRefusalCode> {
    return this.hops.decideHop(this.callId, facts);
  }

  private get fs(): CheckedFs {
    // Only collectFsChecks (below, through the port) fills `fsChecks`: they are FsChecks.
    this.files ??= new CheckedFs(this.checked.fsChecks as readonly FsCheck[], this.checked.resources, this.hops.fsHooks, () => this.ensureRunning());
    return this.files;
  }

  open(path: string, flags?: CheckedOpenFlags): Promise<FileHandle> {
    return this.fs.open(path, flags);
  }
  readdir(path: string): Promise<string[]> {
    return this.fs.readdir(path);
  }
  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    return this.fs.writeFile(path, data);
  }
  rename(from: string, to: string): Promise<void> {
    return this.fs.rename(from, to);
  }
  /** What the call really used per meter; the last report counts (the ledger clamps it to the reservation). */
  report(usage: MeterAmounts): void {
    // Not on abort: a cancelled tool may still say what it used before it stops.
    if (this.ended) throw new ResourceRefusedError('call_not_running');
    // Read once, then validated: what is checked is what is charged.
    const snapshot = meterAmountsSnapshot(usage, 'report');
    if (!snapshot.ok) throw new TypeError(snapshot.problem);
    this.reported = snapshot.amounts;
  }

  async fetch(url: string | URL, init: CheckedFetchInit = {}): Promise<Response> {
    this.ensureRunning();
    return checkedFetch(url, init, this, this.hops.resolveHost, this.signal);
  }
}

/** The resources room behind the core's port: the public entry (src/createLedger.ts) wires it into every ledger. */
export const nodeToolResources: ToolResources = {
  noneChecked: noCheckedResources,
  collectChecks: collectFsChecks,
  callContext: (callId, grantId, abort, checked, hops) => new ToolCallContext(callId, grantId, abort, checked, hops),
};
