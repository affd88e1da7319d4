import { Subject, filter, type Observable } from 'rxjs';
import { sealEvent } from '../domain/chain';
import { canonicalJson } from '../domain/canonicalJson';
import type { Command } from '../domain/commands';
import { decide, type Decision } from '../domain/decide';
import type { DecisionEvent, GrantScope, LedgerEvent } from '../domain/events';
import { TransientState } from '../domain/transientState';
import { visibleTools, type VisibleTool } from '../domain/visibleTools';
import type { JsonObject } from '../domain/json';
import { limits, toolNamePattern } from '../domain/limits';
import { rejectMessage, type RejectReason } from '../domain/reasons';
import { shardGet, shardValues } from '../domain/shardedMap';
import type { InFlightCall, LedgerState } from '../domain/state';
import { LedgerError } from '../errors';
import { isSharedEventStore, isSnapshotEventStore, type EventStore } from '../stores/eventStore';
import { memoryStore } from '../stores/memoryStore';
import { snapshotArguments, type ArgumentSnapshot } from '../tools/arguments';
import { InvalidCommandError } from './invalidCommandError';
import { LazyAbort } from './lazyAbort';
import { CommandStream } from './commandStream';
import { callIdSource, newGrantId, newToken, tokenDigest } from './ids';
import { isolateSubscriberErrors } from './subscriberIsolation';
import { ToolRegistry } from './toolRegistry';
import { ScopeInterner } from './scopeInterner';
import type { IssueOptions, InvokeOutcome, Ledger, LedgerOptions, RevokeOptions, ToolDefinition, Usage, IssuedGrant } from './types';
import { openLog } from './openLog';
import { admitCommand, type AgentCall } from './admitCommand';
import { foldForeign } from './foldForeign';

/** What a batch tells each request: its events, a refusal, or that the store failed. */
type BatchResult =
  | { readonly kind: 'decided'; readonly events: readonly LedgerEvent[] }
  | { readonly kind: 'refused'; readonly decision: Extract<Decision, { ok: false }> }
  | { readonly kind: 'unavailable'; readonly cause: unknown };

type HostRequest = { readonly kind: 'host'; readonly command: (at: number) => Command; readonly done: (r: BatchResult) => void };
type InvokeRequest = AgentCall & { readonly kind: 'invoke'; readonly done: (r: BatchResult) => void };
type Request = HostRequest | InvokeRequest;

interface Running {
  readonly grantId: string;
  readonly controller: LazyAbort;
}

const invalidToolName = '(invalid-name)';

class LedgerImpl implements Ledger {
  private current: LedgerState;
  private readonly store: EventStore;
  private readonly clock: () => number;
  private readonly refundOnError: boolean;
  private readonly registry = new ToolRegistry();
  private readonly scopes = new ScopeInterner();
  private readonly stream: CommandStream<Request>;
  private readonly events$Subject = new Subject<LedgerEvent>();
  private readonly running = new Map<string, Running>();
  /** Set while `close` waits for running tools: called when the last one has settled. */
  private whenNoneRunning: (() => void) | undefined;
  private readonly nextCallId = callIdSource();
  private closing = false;
  readonly events$: Observable<LedgerEvent>;
  readonly decisions$: Observable<DecisionEvent>;

  constructor(options: LedgerOptions) {
    isolateSubscriberErrors();
    this.clock = options.clock ?? Date.now;
    this.store = options.store ?? memoryStore();
    this.refundOnError = options.onToolError === 'refund';
    const pendingMax = options.pendingCommandsMax ?? limits.pendingCommandsMax;
    if (!Number.isSafeInteger(pendingMax) || pendingMax < 1) throw new TypeError('pendingCommandsMax must be a positive integer');
    this.current = openLog(this.store);
    this.stream = new CommandStream<Request>(pendingMax, limits.batchCommandsMax, (batch) => this.processBatch(batch));
    this.events$ = this.events$Subject.asObservable();
    this.decisions$ = this.events$.pipe(filter((e): e is DecisionEvent => e.type === 'call.admitted' || e.type === 'call.rejected'));
  }

  // ---- host side -------------------------------------------------------------------------------

  async registerTool<Args extends JsonObject, Result>(tool: ToolDefinition<Args, Result>): Promise<void> {
    const definition = tool as unknown as ToolDefinition<JsonObject, unknown>;
    if (definition === null || typeof definition !== 'object') throw new TypeError('registerTool needs a tool definition object');
    if (typeof definition.name !== 'string' || !toolNamePattern.test(definition.name)) throw new TypeError(`tool name must match ${toolNamePattern}`);
    if (this.registry.has(definition.name)) throw new TypeError(`tool ${definition.name} is already registered by this ledger`);
    if (typeof definition.run !== 'function') throw new TypeError(`tool ${definition.name} needs a run function`);
    if (definition.resources !== undefined && typeof definition.resources !== 'function') throw new TypeError(`tool ${definition.name}: resources must be a function`);
    const inputSchema = hostJson(definition.inputSchema, `tool ${definition.name}: inputSchema`);
    if (inputSchema.type !== undefined && inputSchema.type !== 'object') throw new TypeError(`tool ${definition.name}: inputSchema must describe an object`);
    let validate;
    try {
      validate = this.registry.compiler.compileToolSchema(inputSchema);
    } catch (error) {
      throw new TypeError(`tool ${definition.name}: inputSchema does not compile: ${(error as Error).message}`);
    }
    await this.runHost((at) => ({ type: 'registerTool', at, tool: definition.name, inputSchema }));
    this.registry.attach(definition, validate);
  }

  async issue(options: IssueOptions): Promise<IssuedGrant> {
    if (options === null || typeof options !== 'object') throw new TypeError('issue needs an options object');
    const args = hostJson(options.args ?? {}, 'args');
    for (const [tool, schema] of Object.entries(args)) {
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw new TypeError(`args[${JSON.stringify(tool)}] must be a JSON Schema object`);
      try {
        this.registry.compiler.compileNarrowing(schema as JsonObject);
      } catch (error) {
        throw new TypeError(`args[${JSON.stringify(tool)}] does not compile: ${(error as Error).message}`);
      }
    }
    const token = newToken();
    const grantId = newGrantId();
    const digest = tokenDigest(token);
    await this.runHost((at) => {
      const scope = {
        tools: options.tools,
        args,
        resources: options.resources ?? [],
        notBefore: options.notBefore ?? at,
        expiresAt: options.expiresAt,
        budget: options.budget,
      };
      // Snapshot the host's objects: later mutation by the caller cannot change an issued scope.
      const copied = safeJsonCopy(scope) as GrantScope | undefined;
      return { type: 'issue', at, grantId, tokenDigest: digest, scope: copied !== undefined ? this.scopes.share(copied) : (scope as unknown as GrantScope) };
    });
    return { grantId, token };
  }

  async revoke(grantId: string, options: RevokeOptions = {}): Promise<void> {
    if (typeof grantId !== 'string') throw new TypeError('revoke needs a grant id');
    const abortInFlight = options.abortInFlight === true;
    await this.runHost((at) => ({ type: 'revoke', at, grantId, abortInFlight }));
    // Local calls are aborted here; foreign revocations are handled while catching up.
    if (abortInFlight) this.abortGrant(grantId);
  }

  usage(grantId: string): Usage {
    this.catchUp();
    const grant = shardGet(this.current.grants, grantId);
    if (grant === undefined) throw new TypeError('no grant has that id');
    return {
      calls: { limit: grant.scope.budget.calls, used: grant.used.calls },
      inputBytes: { limit: grant.scope.budget.inputBytes, used: grant.used.inputBytes },
    };
  }

  visibleTools(token: string): readonly VisibleTool[] {
    // Agent-facing: never throws (a failing shared store or clock shows nothing rather than too much).
    try {
      if (typeof token !== 'string') return [];
      this.catchUp();
      const at = this.clock();
      if (typeof at !== 'number' || !Number.isFinite(at)) return [];
      return visibleTools(this.current, shardGet(this.current.tokens, tokenDigest(token)), at);
    } catch {
      return [];
    }
  }

  events(): readonly LedgerEvent[] {
    this.catchUp();
    return Object.freeze(Array.from(this.store.load()));
  }

  state(): LedgerState {
    this.catchUp();
    return this.current;
  }

  inFlight(): readonly InFlightCall[] {
    this.catchUp();
    return Object.freeze(Array.from(shardValues(this.current.inFlight)).sort((a, b) => a.seq - b.seq));
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.stream.idle();
    while (this.running.size > 0) {
      await new Promise<void>((resolve) => (this.whenNoneRunning = resolve));
      await this.stream.idle();
    }
    this.stream.stop();
    this.events$Subject.complete();
    this.store.close?.();
  }

  // ---- agent side ------------------------------------------------------------------------------

  async invoke<Result>(token: string, tool: string, args: unknown): Promise<InvokeOutcome<Result>> {
    const callId = this.nextCallId();
    if (this.closing) return rejected(callId, 'ledger_unavailable');
    const digest = typeof token === 'string' ? tokenDigest(token) : undefined;
    const toolName = typeof tool === 'string' && toolNamePattern.test(tool) ? tool : invalidToolName;
    const snapshot = snapshotArguments(args);
    // One request object per call, built where its `done` exists (a burst keeps 100,000 of them alive).
    const result = await new Promise<BatchResult>((resolve) => {
      const request: InvokeRequest = { kind: 'invoke', callId, tokenDigest: digest, tool: toolName, args: snapshot, done: resolve };
      if (!this.stream.submit(request)) resolve({ kind: 'unavailable', cause: 'queue full' });
    });
    if (result.kind !== 'decided') return rejected(callId, 'ledger_unavailable');
    const event = result.events[0];
    if (event === undefined || event.type !== 'call.admitted') {
      return rejected(callId, event?.type === 'call.rejected' ? event.reason : 'ledger_unavailable');
    }
    return this.execute<Result>(event, snapshot);
  }

  private async execute<Result>(admitted: Extract<LedgerEvent, { type: 'call.admitted' }>, args: ArgumentSnapshot): Promise<InvokeOutcome<Result>> {
    const attached = this.registry.get(admitted.tool);
    const controller = new LazyAbort();
    this.running.set(admitted.callId, { grantId: admitted.grantId, controller });
    let outcome: InvokeOutcome<Result>;
    try {
      if (attached === undefined || !args.ok) throw new LedgerError('ledger_unavailable', 'tool implementation missing');
      const value = (await attached.definition.run(args.value, { get signal() { return controller.signal; }, callId: admitted.callId, grantId: admitted.grantId })) as Result;
      outcome = { status: 'completed', callId: admitted.callId, value };
    } catch (error) {
      outcome = { status: 'failed', callId: admitted.callId, error };
    }
    const outcomeKind = outcome.status === 'completed' ? 'completed' : 'failed';
    // Settling must never be dropped, so it bypasses the pending bound (it is bounded by admissions).
    await new Promise<BatchResult>((resolve) => {
      this.stream.submitAlways({
        kind: 'host',
        command: (at) => ({ type: 'settle', at, callId: admitted.callId, outcome: outcomeKind, refund: this.refundOnError }),
        done: resolve,
      });
    });
    this.running.delete(admitted.callId);
    if (this.running.size === 0 && this.whenNoneRunning !== undefined) {
      const wake = this.whenNoneRunning;
      this.whenNoneRunning = undefined;
      wake();
    }
    return outcome;
  }

  // ---- the serialized step ---------------------------------------------------------------------

  private runHost(command: (at: number) => Command): Promise<readonly LedgerEvent[]> {
    if (this.closing) return Promise.reject(new LedgerError('closed', 'the ledger is closed'));
    return new Promise((resolve, reject) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'decided') resolve(result.events);
        else if (result.kind === 'refused') reject(new InvalidCommandError(result.decision.code, result.decision.message));
        else reject(new LedgerError('ledger_unavailable', 'the store could not record the command', { cause: result.cause }));
      };
      if (!this.stream.submit({ kind: 'host', command, done })) done({ kind: 'unavailable', cause: 'too many pending commands' });
    });
  }

  /** Decides a whole batch against a working state, appends its events in one store call, then commits. */
  private processBatch(batch: Request[]): void {
    let foreign: readonly LedgerEvent[] = [];
    let outcome: { state: LedgerState; sealed: LedgerEvent[]; results: BatchResult[] } | undefined;
    try {
      const decideAll = (caughtUp: readonly LedgerEvent[]): void => {
        foreign = caughtUp;
        outcome = this.decideBatch(foldForeign(this.current, caughtUp), batch);
        if (outcome.sealed.length > 0) this.store.append(outcome.sealed);
      };
      if (isSharedEventStore(this.store)) this.store.exclusive(this.current.head.seq, decideAll);
      else decideAll([]);
    } catch (cause) {
      outcome = undefined;
      // Foreign events were read inside a transaction that failed: they are re-read next time.
      foreign = [];
      for (const request of batch) request.done({ kind: 'unavailable', cause });
      return;
    }
    if (outcome === undefined) return;
    this.current = outcome.state;
    this.publish(foreign);
    this.publish(outcome.sealed);
    for (let i = 0; i < batch.length; i++) (batch[i] as Request).done(outcome.results[i] as BatchResult);
    if (outcome.sealed.length > 0 && isSnapshotEventStore(this.store)) this.store.offerSnapshot(this.current);
  }

  private decideBatch(start: LedgerState, batch: readonly Request[]): { state: LedgerState; sealed: LedgerEvent[]; results: BatchResult[] } {
    // Batch-local fold: each trie path is copied once per batch, not once per event; `start` stays untouched.
    const transient = new TransientState(start);
    const sealed: LedgerEvent[] = [];
    const results: BatchResult[] = [];
    for (const request of batch) {
      const state = transient.view;
      const at = this.clock();
      const command = request.kind === 'host' ? request.command(at) : admitCommand(this.registry, state, request, at);
      if (command === undefined) {
        // The log knows the tool but this ledger object has no implementation to check or run:
        // a host misconfiguration, not an agent decision, so fail closed without logging a verdict.
        results.push({ kind: 'unavailable', cause: 'tool not attached to this ledger' });
        continue;
      }
      const decision = decide(state, command);
      if (!decision.ok) {
        results.push({ kind: 'refused', decision });
        continue;
      }
      const events: LedgerEvent[] = [];
      for (const payload of decision.events) {
        const event = sealEvent(payload, at, transient.view.head);
        transient.apply(event);
        events.push(event);
        sealed.push(event);
      }
      results.push({ kind: 'decided', events });
    }
    return { state: transient.commit(), sealed, results };
  }

  // ---- after commit ----------------------------------------------------------------------------

  private publish(events: readonly LedgerEvent[]): void {
    for (const event of events) {
      if (event.type === 'grant.revoked' && event.abortInFlight) this.abortGrant(event.grantId);
      this.events$Subject.next(event);
    }
  }

  private abortGrant(grantId: string): void {
    for (const running of this.running.values()) {
      if (running.grantId === grantId && !running.controller.aborted) running.controller.abort(new LedgerError('ledger_unavailable', 'the grant was revoked'));
    }
  }

  /** With a shared store, folds what other writers appended since this ledger last looked. */
  private catchUp(): void {
    if (!isSharedEventStore(this.store) || this.closing) return;
    const foreign = this.store.readAfter(this.current.head.seq);
    if (foreign.length === 0) return;
    this.current = foldForeign(this.current, foreign);
    this.publish(foreign);
  }
}

function rejected(callId: string, reason: RejectReason): InvokeOutcome<never> {
  return { status: 'rejected', callId, reason, message: rejectMessage(reason) };
}

function safeJsonCopy(value: unknown): unknown {
  try {
    return JSON.parse(canonicalJson(value)) as unknown;
  } catch {
    return undefined;
  }
}

function hostJson(value: unknown, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${what} must be a JSON object`);
  const copy = safeJsonCopy(value);
  if (copy === undefined) throw new TypeError(`${what} must be plain JSON`);
  return copy as JsonObject;
}

/** Opens a ledger: rebuilds state from the store's log (refusing a log that does not verify). */
export function createLedger(options: LedgerOptions = {}): Ledger {
  return new LedgerImpl(options);
}


