import { Subject, filter, type Observable } from 'rxjs';
import { sealEvent } from '../domain/chain';
import { canonicalJson } from '../domain/canonicalJson';
import type { Command } from '../domain/commands';
import { decide, type Decision } from '../domain/decide';
import type { DecisionEvent, EventOf, GrantScope, LedgerEvent, ResourceTemplates } from '../domain/events';
import { TransientState } from '../domain/transientState';
import { LiveState } from './liveState';
import { visibleTools, type VisibleTool } from '../domain/visibleTools';
import type { JsonObject } from '../domain/json';
import { limits, toolNamePattern } from '../domain/limits';
import { rejectMessage, type RejectReason } from '../domain/reasons';
import { shardGet, shardValues } from '../domain/shardedMap';
import type { InFlightCall, LedgerState } from '../domain/state';
import { LedgerError } from '../errors';
import { isAsyncEventStore, isSharedEventStore, isSnapshotEventStore, type AsyncEventStore, type EventStore } from '../stores/eventStore';
import { memoryStore } from '../stores/memoryStore';
import { snapshotArguments, type ArgumentSnapshot } from '../tools/arguments';
import { InvalidCommandError } from './invalidCommandError';
import { LazyAbort } from './lazyAbort';
import { CommandStream } from './commandStream';
import { hostPrincipal, nextPrincipalRef } from './principalIssue';
import { principalGrantId } from '../domain/principals';
import { CallIds, newGrantId, newJournalOwner, newToken, presentedTokenDigest, tokenDigest } from './ids';
import { memoryJournal, storeJournal, type PendingSettlement, type SettlementJournal } from '../stores/settlementJournal';
import { isolateSubscriberErrors } from './subscriberIsolation';
import { ToolRegistry } from './toolRegistry';
import { ScopeInterner } from './scopeInterner';
import type { AttenuateOutcome, AttenuationRequest, RevokeDelegationOutcome, IssueOptions, InvokeOutcome, InvokeOptions, KeyedInvokeOptions, KeyedInvokeOutcome, Ledger, LedgerOptions, LogFollower, RevokeOptions, ToolDefinition, Usage, IssuedGrant } from './types';
import { openFollowerOnEvents, openLogAsync, openLogWithFollower } from './openLog';
import { admitCommand, type ArgumentRefusal, type AgentCall } from './admitCommand';
import { grantUsage } from './grantUsage';
import type { HopFacts } from '../domain/fetchHop';
import type { ResourceRefusalCode } from '../resources/resourceRefusedError';
import { noCheckedResources, ToolCallContext, type CheckedResources, type LedgerHops } from '../resources/toolContext';
import { systemResolveHost } from '../resources/url/resolveHost';
import { foldForeign } from './foldForeign';
import { CallTimeouts, systemSetTimer, timeoutError } from './callTimeouts';
import { readClock } from './readClock';
import { idempotencyTtlMsDefault, keyedCall } from './keyedCalls';
import { readInvokeOptions } from './invokeOptions';
import { onSignalAbort, signalAborted, signalReason } from './hostSignal';
import { bindingAt, keyStatus } from '../domain/idempotency';
import { HeldOutcomes } from './heldOutcomes';
import { inputSchemaOf, undeclaredNarrowingProblem } from './narrowingChecks';
import { attenuateOutcome, attenuationUnavailable, checkAttenuationRequest, revocationUnavailable, revokeDelegationOutcome, targetGrantId } from './delegationRequests';

/** What a batch tells each request: its events, a refusal, or that the store failed. */
type BatchResult =
  | { readonly kind: 'decided'; readonly events: readonly LedgerEvent[] }
  | { readonly kind: 'refused'; readonly decision: Extract<Decision, { ok: false }> }
  | { readonly kind: 'unavailable'; readonly cause: unknown };

type HostRequest = { readonly kind: 'host'; readonly command: (at: number, state: LedgerState) => Command; readonly done: (r: BatchResult) => void; readonly queuedAt: number };
type InvokeRequest = AgentCall & { readonly kind: 'invoke'; readonly done: (r: BatchResult) => void; readonly queuedAt: number; checked: CheckedResources; refusal?: ArgumentRefusal };
/** An asynchronous store's periodic fold of other writers' events (it decides nothing). */
type CatchUpRequest = { readonly kind: 'catchUp'; readonly done: (r: BatchResult) => void; readonly queuedAt: number };
type Request = HostRequest | InvokeRequest | CatchUpRequest;

/** What an asynchronous store held when `openLedger` opened it. */
interface OpenedAsync {
  readonly store: AsyncEventStore;
  readonly state: LedgerState;
  readonly events: LedgerEvent[];
}

interface Running {
  readonly grantId: string;
  /** The grant's ancestors (a child's call): revoking any of them aborts this call too. */
  readonly ancestors: readonly string[] | undefined;
  readonly controller: LazyAbort;
  /** Only for a call with a deadline: told when the log settled it as timed out (here or by another writer). */
  timedOut?: (error: DOMException) => void;
  /** Retries of this (keyed) call decided while it runs, waiting for its outcome; made by the first such retry. */
  retries?: ((outcome: InvokeOutcome<unknown>) => void)[];
}

const invalidToolName = '(invalid-name)';

/** Journals of stores that bring none, per store object: a reopen in this process finds what a closed ledger kept. */
const processJournals = new WeakMap<object, SettlementJournal>();

function journalFor(store: object): SettlementJournal {
  const own = storeJournal(store);
  if (own !== undefined) return own;
  let journal = processJournals.get(store);
  if (journal === undefined) processJournals.set(store, (journal = memoryJournal()));
  return journal;
}

class LedgerImpl implements Ledger {
  /** The state after every event folded: frozen, or (with `live`) its view, never handed out unfrozen. */
  private current: LedgerState;
  /** On a store that neither shares its log nor takes snapshots: the state kept open across batches (liveState.ts). */
  private readonly live: LiveState | undefined;
  /** Exactly one of the two is set: a synchronous store, or an asynchronous one (openLedger). */
  private readonly store: EventStore | undefined;
  private readonly asyncStore: AsyncEventStore | undefined;
  /** With an asynchronous store: every event folded so far, for `events()`. */
  private readonly folded: LedgerEvent[] | undefined;
  private catchUpTimer: ReturnType<typeof setInterval> | undefined;
  private catchUpQueued = false;
  private readonly clock: () => number;
  private readonly refundOnError: boolean;
  private readonly registry = new ToolRegistry();
  private readonly scopes = new ScopeInterner();
  private readonly stream: CommandStream<Request>;
  private readonly events$Subject = new Subject<LedgerEvent>();
  private readonly running = new Map<string, Running>();
  /** Set while `close` waits for running tools: called when the last one has settled. */
  private whenNoneRunning: (() => void) | undefined;
  private readonly callIds = new CallIds();
  /** The transparency option: fed every committed event (src/transparency implements it). */
  private readonly follower: LogFollower | undefined;
  /** The follower's text for a snapshot, read only when one is written. */
  private readonly followerText: (() => string) | undefined;
  private closing = false;
  /** Settlements the store has not taken yet (kept in the journal too), and the loops retrying them. */
  private readonly unsettled = new Map<string, PendingSettlement>();
  private readonly settling = new Set<Promise<boolean>>();
  private readonly retryWakers = new Set<() => void>();
  private readonly journal: SettlementJournal;
  private readonly journalOwner = newJournalOwner();
  /** Whether the journal holds the current `unsettled` list (its last write succeeded). */
  private journaled = true;
  private readonly hops: LedgerHops;
  private readonly timeouts: CallTimeouts;
  private readonly keyTtlMs: number;
  private readonly keysMax: number;
  /** Outcomes of keyed calls this ledger ran, for their retries (bounded: the oldest goes first). */
  private readonly heldOutcomes = new HeldOutcomes(limits.idempotentOutcomesHeldMax);
  readonly events$: Observable<LedgerEvent>;
  readonly decisions$: Observable<DecisionEvent>;

  constructor(options: LedgerOptions, opened?: OpenedAsync) {
    isolateSubscriberErrors();
    this.clock = options.clock ?? Date.now;
    const store = opened?.store ?? options.store ?? memoryStore();
    if (isAsyncEventStore(store) && opened === undefined) throw new TypeError('this store is asynchronous: open the ledger with `await openLedger(options)`');
    this.store = isAsyncEventStore(store) ? undefined : store;
    this.asyncStore = opened?.store;
    this.folded = opened?.events;
    this.refundOnError = options.onToolError === 'refund';
    this.keyTtlMs = options.idempotencyTtlMs ?? idempotencyTtlMsDefault;
    if (!Number.isSafeInteger(this.keyTtlMs) || this.keyTtlMs < 1) throw new TypeError('idempotencyTtlMs must be a positive safe integer (ms)');
    this.keysMax = options.idempotencyKeysPerTreeMax ?? limits.idempotencyKeysPerTreeMax;
    if (!Number.isSafeInteger(this.keysMax) || this.keysMax < 1 || this.keysMax > limits.idempotencyKeysPerTreeMax) throw new TypeError(`idempotencyKeysPerTreeMax must be an integer from 1 to ${limits.idempotencyKeysPerTreeMax}`);
    const pendingMax = options.pendingCommandsMax ?? limits.pendingCommandsMax;
    if (!Number.isSafeInteger(pendingMax) || pendingMax < 1) throw new TypeError('pendingCommandsMax must be a positive integer');
    this.follower = options.transparency;
    const follower = this.follower;
    this.followerText = follower?.snapshotText !== undefined ? () => (follower.snapshotText as () => string).call(follower) : undefined;
    this.current = opened?.state ?? openLogWithFollower(this.store as EventStore, this.follower);
    this.live = this.store !== undefined && !isSharedEventStore(this.store) && !isSnapshotEventStore(this.store) ? new LiveState(this.current) : undefined;
    this.hops = {
      scopesOf: (grantId) => shardGet(this.current.grants, grantId)?.scope.resources ?? [],
      decideHop: (callId, facts) => this.decideHop(callId, facts),
      resolveHost: options.resolveHost ?? systemResolveHost,
    };
    const asyncStore = this.asyncStore;
    const syncStore = this.store as EventStore;
    this.stream = new CommandStream<Request>(
      pendingMax,
      limits.batchCommandsMax,
      asyncStore !== undefined ? (batch) => this.processBatchAsync(asyncStore, batch) : (batch) => this.processBatch(syncStore, batch),
    );
    if (this.asyncStore !== undefined) {
      this.catchUpTimer = setInterval(() => this.queueCatchUp(), this.asyncStore.catchUpIntervalMs);
      this.catchUpTimer.unref();
    }
    this.events$ = this.events$Subject.asObservable();
    this.decisions$ = this.events$.pipe(filter((e): e is DecisionEvent => e.type === 'call.admitted' || e.type === 'call.rejected'));
    this.journal = journalFor(store);
    this.timeouts = new CallTimeouts(this.clock, options.setTimer ?? systemSetTimer, (callId) => this.timeOut(callId));
    this.settleKept();
    // What a crash (or another writer) left open is timed out once its deadline passes; settlements
    // taken over from the journal were decided first and are already queued ahead of any timeout.
    for (const call of shardValues(this.current.inFlight)) if (call.deadline !== undefined) this.timeouts.schedule(call.callId, call.deadline);
  }

  // ---- host side -------------------------------------------------------------------------------

  async registerTool<Args extends JsonObject, Result>(tool: ToolDefinition<Args, Result>): Promise<void> {
    const definition = tool as unknown as ToolDefinition<JsonObject, unknown>;
    if (definition === null || typeof definition !== 'object') throw new TypeError('registerTool needs a tool definition object');
    if (typeof definition.name !== 'string' || !toolNamePattern.test(definition.name)) throw new TypeError(`tool name must match ${toolNamePattern}`);
    if (this.registry.has(definition.name)) throw new TypeError(`tool ${definition.name} is already registered by this ledger`);
    if (typeof definition.run !== 'function') throw new TypeError(`tool ${definition.name} needs a run function`);
    if (definition.resources !== undefined && typeof definition.resources !== 'function') throw new TypeError(`tool ${definition.name}: resources must be a function`);
    if (definition.cost !== undefined && typeof definition.cost !== 'function') throw new TypeError(`tool ${definition.name}: cost must be a function`);
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
      const undeclared = undeclaredNarrowingProblem(inputSchemaOf(this.current, tool), tool, schema as JsonObject);
      if (undeclared !== undefined) throw new TypeError(undeclared);
    }
    const templates = options.resourceTemplates === undefined ? undefined : (hostJson(options.resourceTemplates, 'resourceTemplates') as unknown as ResourceTemplates);
    const token = newToken();
    const digest = tokenDigest(token);
    // A principal's grant id is derived (src/domain/principals.ts); the decider refuses it if another
    // writer took that generation meanwhile.
    const principal = hostPrincipal(options.principal);
    const ref = principal === undefined ? undefined : nextPrincipalRef(this.state(), principal);
    const grantId = ref === undefined ? newGrantId() : principalGrantId(ref.name, ref.policy, ref.generation);
    await this.runHost((at) => {
      const scope = {
        tools: options.tools,
        args,
        resources: options.resources ?? [],
        notBefore: options.notBefore ?? at,
        expiresAt: options.expiresAt,
        budget: options.budget,
        ...(options.callTimeoutMs !== undefined ? { callTimeoutMs: options.callTimeoutMs } : {}),
      };
      // Snapshot the host's objects: later mutation by the caller cannot change an issued scope.
      const copied = safeJsonCopy(scope) as GrantScope | undefined;
      const shared = copied !== undefined ? this.scopes.share(copied) : (scope as unknown as GrantScope);
      return {
        type: 'issue',
        at,
        grantId,
        tokenDigest: digest,
        scope: shared,
        ...(templates !== undefined ? { resourceTemplates: templates } : {}),
        ...(options.fsBase !== undefined ? { fsBase: options.fsBase } : {}),
        ...(ref !== undefined ? { principal: ref } : {}),
      };
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
    return grantUsage(grant, this.clock);
  }

  visibleTools(token: string): readonly VisibleTool[] {
    return this.visibleToolsOfDigest(() => presentedTokenDigest(token));
  }

  private visibleToolsOfDigest(digestOf: () => string | undefined): readonly VisibleTool[] {
    // Agent-facing: never throws (a failing shared store or clock shows nothing rather than too much).
    try {
      const digest = digestOf();
      if (digest === undefined) return [];
      this.catchUp();
      const at = this.clock();
      if (typeof at !== 'number' || !Number.isFinite(at)) return [];
      return visibleTools(this.current, shardGet(this.current.tokens, digest), at);
    } catch {
      return [];
    }
  }

  events(): readonly LedgerEvent[] {
    this.catchUp();
    if (this.folded !== undefined) return Object.freeze(this.folded.slice());
    try {
      return Object.freeze(Array.from((this.store as EventStore).load()));
    } catch (cause) {
      // e.g. better-sqlite3's TypeError once the store's connection is closed
      if (cause instanceof LedgerError) throw cause;
      throw this.closing ? new LedgerError('closed', 'the ledger is closed: its store no longer reads', { cause }) : new LedgerError('store_failed', 'the store could not read the log', { cause });
    }
  }

  state(): LedgerState {
    this.catchUp();
    // Handed out, so frozen: later batches copy what they change instead of changing it in place.
    if (this.live !== undefined) this.current = this.live.frozen();
    return this.current;
  }

  inFlight(): readonly InFlightCall[] {
    this.catchUp();
    return Object.freeze(Array.from(shardValues(this.current.inFlight)).sort((a, b) => a.seq - b.seq));
  }

  async runDueTimeouts(): Promise<number> {
    this.catchUp();
    const at = readClock(this.clock);
    if (at === undefined) return 0;
    const due: string[] = [];
    for (const call of shardValues(this.current.inFlight)) if (call.deadline !== undefined && call.deadline <= at) due.push(call.callId);
    let timedOut = 0;
    await Promise.all(due.map(async (callId) => {
      this.timeouts.cancel(callId);
      const settled = await this.timeOut(callId, () => timedOut++);
      const deadline = shardGet(this.current.inFlight, callId)?.deadline;
      if (!settled && deadline !== undefined) this.timeouts.schedule(callId, deadline, limits.settleRetryMinMs);
    }));
    return timedOut;
  }

  /**
   * Asks the log to settle a call as timed out: true when that call is no longer open (this did it,
   * or something settled it first), false when the store refused (try again later). A settlement this
   * ledger decided first and is still appending (or took over from the journal) wins: no timeout.
   */
  private timeOut(callId: string, onTimedOut?: () => void): Promise<boolean> {
    if (this.unsettled.has(callId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'unavailable') return resolve(false);
        if (result.kind === 'decided' && result.events[0]?.type === 'call.failed') onTimedOut?.();
        if (result.kind === 'refused' && result.decision.code === 'call_not_due') {
          // The clock went back since the timer looked: wait again for what the state says.
          const deadline = shardGet(this.current.inFlight, callId)?.deadline;
          if (deadline !== undefined) this.timeouts.schedule(callId, deadline, limits.settleRetryMinMs);
        }
        resolve(true);
      };
      const command = (at: number): Command => ({ type: 'timeout', at, callId, refund: this.refundOnError });
      this.stream.submitAlways({ kind: 'host', command, done, queuedAt: this.queuedAt() });
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.stream.idle();
    // Settlements still retrying get one more attempt now; what does not land stays in the journal.
    this.wakeRetries();
    while (this.running.size > 0) {
      await new Promise<void>((resolve) => (this.whenNoneRunning = resolve));
      await this.stream.idle();
    }
    while (this.settling.size > 0) await Promise.all(this.settling);
    this.timeouts.stop();
    await this.stream.idle();
    this.stream.stop();
    if (this.catchUpTimer !== undefined) clearInterval(this.catchUpTimer);
    this.follower?.close?.();
    this.events$Subject.complete();
    if (this.asyncStore !== undefined) await this.asyncStore.close();
    else this.store?.close?.();
  }

  // ---- agent side ------------------------------------------------------------------------------

  invoke<Result>(token: string, tool: string, args: unknown, options: KeyedInvokeOptions): Promise<KeyedInvokeOutcome<Result>>;
  invoke<Result>(token: string, tool: string, args: unknown, options?: InvokeOptions): Promise<InvokeOutcome<Result>>;
  invoke<Result>(token: string, tool: string, args: unknown, options?: InvokeOptions | KeyedInvokeOptions): Promise<KeyedInvokeOutcome<Result>> {
    return this.invokeDigest<Result>(presentedTokenDigest(token), tool, args, options);
  }

  // Host side: the grant's own token digest stands in for the token (docs/api.md, "invokeAsGrant").
  invokeAsGrant<Result>(grantId: string, tool: string, args: unknown, options?: InvokeOptions): Promise<InvokeOutcome<Result>> {
    return this.invokeDigest<Result>(this.grantDigest(grantId), tool, args, options) as Promise<InvokeOutcome<Result>>;
  }

  visibleToolsOfGrant(grantId: string): readonly VisibleTool[] {
    return this.visibleToolsOfDigest(() => this.grantDigest(grantId));
  }

  private grantDigest(grantId: unknown): string | undefined {
    if (typeof grantId !== 'string') return undefined;
    try {
      this.catchUp();
      return shardGet(this.current.grants, grantId)?.tokenDigest;
    } catch {
      return undefined; // a failing shared store: the call is then refused as unknown, never run
    }
  }

  private async invokeDigest<Result>(digest: string | undefined, tool: string, args: unknown, options?: InvokeOptions | KeyedInvokeOptions): Promise<KeyedInvokeOutcome<Result>> {
    const ordinal = this.callIds.take();
    const callId = this.callIds.id(ordinal);
    if (this.closing) return rejected(callId, 'ledger_unavailable');
    const toolName = typeof tool === 'string' && toolNamePattern.test(tool) ? tool : invalidToolName;
    const snapshot = snapshotArguments(args);
    const read = readInvokeOptions(options);
    const key = read === 'unreadable' ? undefined : read.idempotencyKey;
    const idempotency = read === 'unreadable' ? 'invalid' : key === undefined ? undefined : keyedCall(key, toolName, snapshot, this.keyTtlMs, this.keysMax);
    // One request object per call, built where its `done` exists (a burst keeps 100,000 of them alive).
    let request: InvokeRequest | undefined;
    const result = await new Promise<BatchResult>((resolve) => {
      request = idempotency === undefined
        ? { kind: 'invoke', callId, tokenDigest: digest, tool: toolName, args: snapshot, done: resolve, queuedAt: this.queuedAt(), checked: noCheckedResources }
        : { kind: 'invoke', callId, tokenDigest: digest, tool: toolName, args: snapshot, done: resolve, queuedAt: this.queuedAt(), checked: noCheckedResources, idempotency };
      if (!this.stream.submit(request)) resolve({ kind: 'unavailable', cause: 'queue full' });
    });
    if (result.kind !== 'decided') return rejected(callId, 'ledger_unavailable');
    const event = result.events[0];
    if (event?.type === 'call.replayed') return this.replayOutcome<Result>(event);
    if (event === undefined || event.type !== 'call.admitted') {
      if (event?.type !== 'call.rejected') return rejected(callId, 'ledger_unavailable');
      if (event.retryAfterMs !== undefined) return { status: 'rejected', callId, reason: event.reason, message: rejectMessage(event.reason), retryAfterMs: event.retryAfterMs };
      if (event.meter !== undefined) return { status: 'rejected', callId, reason: event.reason, message: rejectMessage(event.reason), meter: event.meter };
      // What failed in the arguments, for the agent only: the event keeps just the reason.
      const refusal = (request as InvokeRequest).refusal;
      if (refusal !== undefined && refusal.reason === event.reason) return { status: 'rejected', callId, reason: event.reason, message: refusal.message };
      return rejected(callId, event.reason);
    }
    return this.execute<Result>(event, ordinal, snapshot, (request as InvokeRequest).checked, read === 'unreadable' ? undefined : read.signal);
  }

  /**
   * A retry the log answered with the first call: that call's outcome once it has one (waiting for it
   * while it runs here), from this ledger's memory; otherwise how the log says it ended, without a value.
   */
  private async replayOutcome<Result>(replay: EventOf<'call.replayed'>): Promise<KeyedInvokeOutcome<Result>> {
    const firstCallId = replay.replayOf;
    const running = this.running.get(firstCallId);
    const ordinal = running === undefined ? this.callIds.ordinalOf(firstCallId) : undefined;
    const held = ordinal === undefined ? undefined : this.heldOutcomes.get(ordinal);
    const outcome = (running !== undefined ? await new Promise<InvokeOutcome<unknown>>((resolve) => (running.retries ??= []).push(resolve)) : held) as KeyedInvokeOutcome<Result> | undefined;
    if (outcome !== undefined && (outcome.status === 'completed' || outcome.status === 'failed')) return { ...outcome, callId: firstCallId, replayed: true };
    // The binding the retry matched (the decision read it from this state).
    const binding = bindingAt(this.current, replay.grantId, replay.idempotency.keyDigest);
    return { status: 'replayed', callId: firstCallId, replayed: true, settled: binding === undefined ? 'in_flight' : keyStatus(this.current, binding) };
  }

  private async execute<Result>(admitted: Extract<LedgerEvent, { type: 'call.admitted' }>, ordinal: number, args: ArgumentSnapshot, checked: CheckedResources, cancel: AbortSignal | undefined): Promise<InvokeOutcome<Result>> {
    const attached = this.registry.get(admitted.tool);
    // In admission order (heldOutcomes.ts): taken before the tool runs, filled in when it has ended.
    const heldSlot = admitted.idempotency === undefined ? -1 : this.heldOutcomes.reserve(ordinal);
    const controller = new LazyAbort();
    const running: Running = { grantId: admitted.grantId, ancestors: admitted.ancestors, controller };
    this.running.set(admitted.callId, running);
    // Only through the prototypes' functions: own properties on the host's signal are never called.
    const stopListening = onSignalAbort(cancel, () => controller.abort(signalReason(cancel)));
    const context = new ToolCallContext(admitted.callId, admitted.grantId, controller, checked, this.hops);
    const run = async (): Promise<InvokeOutcome<Result>> => {
      try {
        if (attached === undefined || !args.ok) throw new LedgerError('ledger_unavailable', 'tool implementation missing');
        if (signalAborted(cancel)) throw signalReason(cancel);
        const value = (await attached.definition.run(args.value, context)) as Result;
        return { status: 'completed', callId: admitted.callId, value };
      } catch (error) {
        return { status: 'failed', callId: admitted.callId, error };
      }
    };
    const deadline = admitted.deadline;
    let outcome: InvokeOutcome<Result> | undefined;
    let timedOut: DOMException | undefined;
    if (deadline === undefined) outcome = await run();
    else {
      // The tool races its deadline: once the log says timed out, invoke answers and the tool's
      // late result is dropped (nothing settles it again).
      const timeout = new Promise<undefined>((resolve) => (running.timedOut = (error) => {
        timedOut = error;
        resolve(undefined);
      }));
      this.timeouts.schedule(admitted.callId, deadline);
      outcome = await Promise.race([run(), timeout]);
      if (outcome !== undefined) this.timeouts.cancel(admitted.callId);
    }
    // The outcome is decided: a context the tool kept (or a tool still running after its timeout) acts no more.
    context.end();
    stopListening();
    if (outcome !== undefined) {
      const outcomeKind = outcome.status === 'completed' ? 'completed' : 'failed';
      const cancelled = outcomeKind === 'failed' && signalAborted(cancel);
      // Read once: a report made after the tool returned (a stray callback) does not change the settlement.
      const report = admitted.reserved.meters !== undefined ? context.reported : undefined;
      const pending: PendingSettlement = pendingSettlement(admitted.callId, outcomeKind, this.refundOnError, cancelled, report);
      const landed = await this.trackSettling(this.settle(pending, deadline));
      if (!landed && !this.journaled) {
        // Closed before the store took it, and the journal could not keep it either: say so.
        outcome = { status: 'failed', callId: admitted.callId, error: new LedgerError('ledger_unavailable', 'the ledger closed before this call could be settled in the store or its journal') };
      }
    }
    // Timed out first (this settlement was then refused, or became the timeout itself): the log decides.
    if (timedOut !== undefined || outcome === undefined) outcome = { status: 'failed', callId: admitted.callId, error: timedOut ?? timeoutError() };
    if (heldSlot >= 0) {
      this.heldOutcomes.hold(heldSlot, ordinal, outcome);
      if (running.retries !== undefined) for (const retry of running.retries) retry(outcome);
    }
    this.running.delete(admitted.callId);
    if (this.running.size === 0 && this.whenNoneRunning !== undefined) {
      const wake = this.whenNoneRunning;
      this.whenNoneRunning = undefined;
      wake();
    }
    return outcome;
  }

  // ---- settlements: never dropped ----------------------------------------------------------------

  /**
   * Appends a settlement, retrying with a bounded backoff for as long as the store refuses it, so it
   * is never lost; resolves true once it is in the log (or the log already settled that call), false
   * when the ledger closed first (then the journal keeps it for the next open). It bypasses the
   * pending bound: settlements are bounded by admissions.
   */
  private async settle(pending: PendingSettlement, deadline?: number): Promise<boolean> {
    let pauseMs: number = limits.settleRetryMinMs;
    let triedWhileClosing = false;
    // Only the first attempt may find the deadline passed: a result the ledger had only once the
    // deadline came is the timeout. A retry carries a settlement decided before it, which wins.
    let dueAt = deadline;
    for (;;) {
      const result = await new Promise<BatchResult>((resolve) => {
        const due = dueAt;
        dueAt = undefined;
        this.stream.submitAlways({
          kind: 'host',
          command: (at) => (due !== undefined && at >= due ? { type: 'timeout', at, callId: pending.callId, refund: pending.refund } : settleCommand(at, pending)),
          done: resolve,
          queuedAt: this.queuedAt(),
        });
      });
      // `refused` is `unknown_call`: the call is no longer in flight, someone recorded its settlement.
      if (result.kind !== 'unavailable') {
        this.setUnsettled(pending.callId, undefined);
        return true;
      }
      this.setUnsettled(pending.callId, pending);
      if (this.closing) {
        if (triedWhileClosing) return false;
        triedWhileClosing = true;
        continue;
      }
      await this.retryPause(pauseMs);
      pauseMs = Math.min(pauseMs * 2, limits.settleRetryMaxMs);
    }
  }

  private trackSettling(settling: Promise<boolean>): Promise<boolean> {
    this.settling.add(settling);
    void settling.finally(() => this.settling.delete(settling));
    return settling;
  }

  /** Records in the journal that a call's settlement is pending (or no longer is). */
  private setUnsettled(callId: string, pending: PendingSettlement | undefined): void {
    const had = this.unsettled.has(callId);
    if (pending === undefined) {
      if (!had) return;
      this.unsettled.delete(callId);
    } else {
      if (had && this.journaled) return;
      this.unsettled.set(callId, pending);
    }
    try {
      this.journal.keep(this.journalOwner, Array.from(this.unsettled.values()));
      this.journaled = true;
    } catch {
      this.journaled = false; // still retried in memory; the next change tries the journal again
    }
  }

  private retryPause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.retryWakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.retryWakers.add(wake);
    });
  }

  private wakeRetries(): void {
    for (const wake of Array.from(this.retryWakers)) wake();
  }

  /** On open: takes over the settlements earlier ledger objects kept (closed, or crashed with a file journal) and appends them. */
  private settleKept(): void {
    let kept: ReturnType<SettlementJournal['kept']>;
    try {
      kept = this.journal.kept();
    } catch {
      return;
    }
    for (const { owner, pending } of kept) {
      if (owner === this.journalOwner) continue;
      // Ours first (in the journal), then the old owner's list is dropped: a crash in between loses nothing.
      const open = pending.filter((p) => shardGet(this.current.inFlight, p.callId) !== undefined && !this.unsettled.has(p.callId));
      for (const p of open) this.setUnsettled(p.callId, p);
      try {
        if (this.journaled) this.journal.keep(owner, []);
      } catch {
        // Left for a later open; settling twice is refused (unknown_call), so nothing doubles.
      }
      for (const p of open) void this.trackSettling(this.settle(p));
    }
  }

  // ---- agent side: delegation ------------------------------------------------------------------

  async attenuate(token: string, request: AttenuationRequest): Promise<AttenuateOutcome> {
    try {
      if (this.closing) return attenuationUnavailable;
      const digest = presentedTokenDigest(token);
      const checked = checkAttenuationRequest(this.registry.compiler, request, (tool) => inputSchemaOf(this.current, tool));
      const child = { grantId: newGrantId(), token: newToken() };
      const childDigest = tokenDigest(child.token);
      const events = await this.runAgent((at, state) => ({
        type: 'attenuate',
        at,
        parentGrantId: digest === undefined ? undefined : shardGet(state.tokens, digest),
        grantId: child.grantId,
        tokenDigest: childDigest,
        request: checked.request,
      }));
      return events === undefined ? attenuationUnavailable : attenuateOutcome(events, child, checked.problem);
    } catch {
      return attenuationUnavailable;
    }
  }

  async revokeDelegation(token: string, grantId: string, options: RevokeOptions = {}): Promise<RevokeDelegationOutcome> {
    try {
      if (this.closing) return revocationUnavailable;
      const digest = presentedTokenDigest(token);
      const target = targetGrantId(grantId);
      const abortInFlight = options !== null && typeof options === 'object' && options.abortInFlight === true;
      // A granted revocation with abortInFlight reaches the subtree's running calls when published.
      const events = await this.runAgent((at, state) => ({ type: 'revokeDelegation', at, byGrantId: digest === undefined ? undefined : shardGet(state.tokens, digest), grantId: target, abortInFlight }));
      return events === undefined ? revocationUnavailable : revokeDelegationOutcome(events);
    } catch {
      return revocationUnavailable;
    }
  }

  /** A hop of a running call's `ctx.fetch`: decided and logged like any command, before any connection. */
  private decideHop(callId: string, facts: HopFacts): Promise<'allowed' | ResourceRefusalCode> {
    // Also while closing: `close` waits for running calls, whose hops must still be decided.
    return new Promise((resolve) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'refused') return resolve('call_not_running');
        const event = result.kind === 'decided' ? result.events[0] : undefined;
        if (event === undefined || event.type !== 'fetch.hop') return resolve('ledger_unavailable');
        resolve(event.outcome === 'allowed' ? 'allowed' : (event.reason ?? 'invalid_resource'));
      };
      const command = (at: number): Command => ({ type: 'hop', at, callId, hop: facts.hop, resource: facts.resource, address: facts.address });
      if (!this.stream.submit({ kind: 'host', command, done, queuedAt: this.queuedAt() })) done({ kind: 'unavailable', cause: 'too many pending commands' });
    });
  }

  // ---- the serialized step ---------------------------------------------------------------------

  /** An agent's command: its events, or undefined when it could not be recorded (never a throw). */
  private runAgent(command: (at: number, state: LedgerState) => Command): Promise<readonly LedgerEvent[] | undefined> {
    return new Promise((resolve) => {
      const done = (result: BatchResult): void => resolve(result.kind === 'decided' ? result.events : undefined);
      if (!this.stream.submit({ kind: 'host', command, done, queuedAt: this.queuedAt() })) resolve(undefined);
    });
  }

  private runHost(command: (at: number) => Command): Promise<readonly LedgerEvent[]> {
    if (this.closing) return Promise.reject(new LedgerError('closed', 'the ledger is closed'));
    return new Promise((resolve, reject) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'decided') resolve(result.events);
        else if (result.kind === 'refused') reject(new InvalidCommandError(result.decision.code, result.decision.message));
        else reject(new LedgerError('ledger_unavailable', 'the store could not record the command', { cause: result.cause }));
      };
      if (!this.stream.submit({ kind: 'host', command, done, queuedAt: this.queuedAt() })) done({ kind: 'unavailable', cause: 'too many pending commands' });
    });
  }


  /** When a request was queued, for an asynchronous store's deadline (the synchronous path needs none). */
  private queuedAt(): number {
    return this.asyncStore === undefined ? 0 : performance.now();
  }

  /** Decides a whole batch against a working state, appends its events in one store call, then commits. */
  private processBatch(store: EventStore, batch: Request[]): void {
    let foreign: readonly LedgerEvent[] = [];
    let outcome: { state: LedgerState; sealed: LedgerEvent[]; results: BatchResult[] } | undefined;
    const mark = this.live?.mark();
    try {
      const decideAll = (caughtUp: readonly LedgerEvent[]): void => {
        foreign = caughtUp;
        outcome = this.decideBatch(foldForeign(this.current, caughtUp), batch);
        if (outcome.sealed.length > 0) store.append(outcome.sealed);
      };
      if (isSharedEventStore(store)) store.exclusive(this.current.head.seq, decideAll);
      else decideAll([]);
    } catch (cause) {
      outcome = undefined;
      // What the batch applied in place is undone: the state is again the one before it.
      if (this.live !== undefined && mark !== undefined) {
        this.live.rollback(mark);
        this.current = this.live.view;
      }
      // Foreign events were read inside a transaction that failed: they are re-read next time.
      foreign = [];
      for (const request of batch) request.done({ kind: 'unavailable', cause });
      return;
    }
    if (outcome === undefined) return;
    this.current = outcome.state;
    this.live?.landed();
    this.publish(foreign);
    this.publish(outcome.sealed);
    for (let i = 0; i < batch.length; i++) (batch[i] as Request).done(outcome.results[i] as BatchResult);
    if (outcome.sealed.length > 0 && isSnapshotEventStore(store)) store.offerSnapshot(this.current, this.followerText);
  }

  /**
   * The same on an asynchronous store: one write transaction decides and appends the batch after
   * folding other writers' events; a batch of catch-up requests only reads. The batch's deadline
   * runs from its oldest request, so time spent queued behind a stalled batch counts.
   */
  private async processBatchAsync(store: AsyncEventStore, batch: Request[]): Promise<void> {
    let foreign: readonly LedgerEvent[] = [];
    let outcome: { state: LedgerState; sealed: LedgerEvent[]; results: BatchResult[] } | undefined;
    const deadline = batch.reduce((oldest, r) => Math.min(oldest, r.queuedAt), Infinity) + store.timeoutMs;
    try {
      if (batch.every((r) => r.kind === 'catchUp')) {
        this.catchUpQueued = false;
        foreign = await store.readAfter(this.current.head.seq, this.current.head.hash);
        outcome = { state: foldForeign(this.current, foreign), sealed: [], results: batch.map(() => ({ kind: 'decided', events: [] })) };
      } else {
        await store.exclusive(
          this.current.head.seq,
          (caughtUp) => {
            foreign = caughtUp;
            outcome = this.decideBatch(foldForeign(this.current, caughtUp), batch);
            return outcome.sealed;
          },
          deadline,
          this.current.head.hash,
        );
      }
    } catch (cause) {
      for (const request of batch) request.done({ kind: 'unavailable', cause });
      return;
    }
    if (outcome === undefined) return;
    this.current = outcome.state;
    const folded = this.folded as LedgerEvent[];
    for (const event of foreign) folded.push(event);
    for (const event of outcome.sealed) folded.push(event);
    this.publish(foreign);
    this.publish(outcome.sealed);
    for (let i = 0; i < batch.length; i++) (batch[i] as Request).done(outcome.results[i] as BatchResult);
    if (outcome.sealed.length > 0 || foreign.length > 0) store.offerSnapshot(this.current);
  }

  /** Queues one catch-up when the stream has nothing else to do (any batch catches up anyway). */
  private queueCatchUp(): void {
    if (this.closing || this.catchUpQueued || this.stream.pending > 0) return;
    this.catchUpQueued = true;
    this.stream.submitAlways({ kind: 'catchUp', done: () => undefined, queuedAt: this.queuedAt() });
  }

  private decideBatch(start: LedgerState, batch: readonly Request[]): { state: LedgerState; sealed: LedgerEvent[]; results: BatchResult[] } {
    // Batch-local fold: each trie path is copied once per batch, not once per event; `start` stays
    // untouched. With `live`, the fold kept open across batches (`start` is its view; a failed append
    // rolls it back).
    const transient: Pick<TransientState, 'view' | 'apply'> = this.live ?? new TransientState(start);
    const sealed: LedgerEvent[] = [];
    const results: BatchResult[] = [];
    for (const request of batch) {
      if (request.kind === 'catchUp') {
        results.push({ kind: 'decided', events: [] });
        continue;
      }
      const state = transient.view;
      const at = readClock(this.clock);
      if (at === undefined) {
        // A clock that throws or reads no finite number cannot date an event: fail this command closed.
        results.push({ kind: 'unavailable', cause: 'the clock did not return a finite number' });
        continue;
      }
      const command = request.kind === 'host' ? request.command(at, state) : admitCommand(this.registry, state, request, at, (checked) => (request.checked = checked), (refusal) => (request.refusal = refusal));
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
    return { state: transient instanceof TransientState ? transient.commit() : transient.view, sealed, results };
  }

  // ---- after commit ----------------------------------------------------------------------------

  private publish(events: readonly LedgerEvent[]): void {
    if (events.length > 0) this.follower?.appended(events);
    for (const event of events) {
      if (event.type === 'grant.revoked' && event.abortInFlight) this.abortGrant(event.grantId);
      if (event.type === 'call.failed' && event.timedOut === true) this.timedOutHere(event.callId);
      this.events$Subject.next(event);
    }
  }

  /** The log settled a call as timed out: if it runs here, abort its signal and let invoke answer. */
  private timedOutHere(callId: string): void {
    this.timeouts.cancel(callId);
    const running = this.running.get(callId);
    if (running?.timedOut === undefined) return;
    const error = timeoutError();
    running.controller.abort(error);
    running.timedOut(error);
  }

  private abortGrant(grantId: string): void {
    for (const running of this.running.values()) {
      const inSubtree = running.grantId === grantId || (running.ancestors !== undefined && running.ancestors.includes(grantId));
      if (inSubtree && !running.controller.aborted) running.controller.abort(new LedgerError('ledger_unavailable', 'the grant was revoked'));
    }
  }

  /** With a shared store, folds what other writers appended since this ledger last looked. */
  private catchUp(): void {
    if (this.store === undefined || !isSharedEventStore(this.store) || this.closing) return;
    const foreign = this.store.readAfter(this.current.head.seq);
    if (foreign.length === 0) return;
    this.current = foldForeign(this.current, foreign);
    this.publish(foreign);
  }
}

/**
 * The settle command for a pending settlement. Literals per case, no spread: this runs for every
 * call, and a spread of a conditional object took ≈ 4 % of a metered call's profile.
 */
function settleCommand(at: number, p: PendingSettlement): Command {
  const { callId, outcome, refund, report } = p;
  if (report === undefined) {
    if (p.cancelled === true) return { type: 'settle', at, callId, outcome, refund, cancelled: true };
    return { type: 'settle', at, callId, outcome, refund };
  }
  if (p.cancelled === true) return { type: 'settle', at, callId, outcome, refund, cancelled: true, report };
  return { type: 'settle', at, callId, outcome, refund, report };
}

/** A call's settlement as the journal keeps it (literals per case, as settleCommand). */
function pendingSettlement(callId: string, outcome: 'completed' | 'failed', refund: boolean, cancelled: boolean, report: PendingSettlement['report']): PendingSettlement {
  if (report === undefined) return cancelled ? { callId, outcome, refund, cancelled: true } : { callId, outcome, refund };
  return cancelled ? { callId, outcome, refund, cancelled: true, report } : { callId, outcome, refund, report };
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

/**
 * Opens a ledger on any store: resolves once the store is open and the state rebuilt. An
 * asynchronous store (PostgreSQL) is connected and migrated first; a synchronous one opens as in
 * `createLedger`. Rejects with LedgerError when the store cannot be opened or its log does not verify.
 */
export async function openLedger(options: LedgerOptions = {}): Promise<Ledger> {
  const store = options.store;
  if (store === undefined || !isAsyncEventStore(store)) return createLedger(options);
  await store.open();
  const { state, events } = await openLogAsync(store);
  if (options.transparency !== undefined) {
    try {
      openFollowerOnEvents(options.transparency, state, events);
    } catch (error) {
      // The follower refused the log (e.g. a checkpoint newer than it): the ledger does not open.
      await store.close().catch(() => undefined);
      throw error;
    }
  }
  return new LedgerImpl(options, { store, state, events });
}


