import { Subject, filter, type Observable } from 'rxjs';
import type { DecisionEvent, LedgerEvent } from '../domain/events';
import { visibleTools, type VisibleTool } from '../domain/visibleTools';
import type { JsonObject } from '../domain/json';
import { limits, toolNamePattern } from '../domain/limits';
import { shardGet, shardValues } from '../domain/shardedMap';
import type { InFlightCall, LedgerState } from '../domain/state';
import { principalGrantId } from '../domain/principals';
import { snapshotArguments } from '../tools/arguments';
import { isAsyncEventStore, isSharedEventStore, type EventStore } from './ports/eventStore';
import { ApprovalDesk } from './approvalDesk';
import { approvalTimeoutMsDefault } from './approvalAsk';
import type { ApprovalEvent, ApproveOptions, ApproveOutcome, DenyOptions, DenyOutcome, PendingApprovalView } from './approvalTypes';
import { openFollowerOnEvents, openLogAsync } from './openLog';
import type { CheckedResources, ResolveHost, ToolResources } from './ports/toolResources';
import { BatchLoop, type OpenedAsync } from './batchLoop';
import type { BatchResult, InvokeRequest } from './batchRequest';
import { CallDeadlines } from './callDeadlines';
import { systemSetTimer } from './callTimeouts';
import { CallRunner, rejected } from './callRunner';
import { decideHop, runAgent, runHost } from './commandRequests';
import { attenuateOutcome, attenuationUnavailable, checkAttenuationRequest, revocationUnavailable, revokeDelegationOutcome, targetGrantId } from './delegationRequests';
import { grantUsage } from './grantUsage';
import { checkIssueApprovals, checkIssueArgs, checkToolDefinition, issueCommand, issueTemplates } from './hostInput';
import { CallIds, newGrantId, newToken, presentedTokenDigest, tokenDigest } from './ids';
import { idempotencyTtlMsDefault, keyedCall } from './keyedCalls';
import { readInvokeOptions } from './invokeOptions';
import { inputSchemaOf } from './narrowingChecks';
import { hostPrincipal, nextPrincipalRef } from './principalIssue';
import { RunningCalls } from './runningCalls';
import { ScopeInterner } from './scopeInterner';
import { Settlements } from './settlements';
import { isolateSubscriberErrors } from './subscriberIsolation';
import { ToolRegistry } from './toolRegistry';
import type { AttenuateOutcome, AttenuationRequest, RevokeDelegationOutcome, IssueOptions, InvokeOutcome, InvokeOptions, KeyedInvokeOptions, KeyedInvokeOutcome, Ledger, LedgerOptions, RevokeOptions, ToolDefinition, Usage, IssuedGrant } from './types';

/** What the public entry (src/createLedger.ts) plugs into the core: the concrete rooms behind its ports. */
export interface LedgerWiring {
  /** The store when the options name none (the memory store). */
  readonly defaultStore: () => EventStore;
  /** The resolver `ctx.fetch` uses when the options name none (the system's). */
  readonly resolveHost: ResolveHost;
  readonly resources: ToolResources;
}

const invalidToolName = '(invalid-name)';

/**
 * The Ledger: checks the host's input, queues commands on the batch loop and wires the rooms that
 * act after a decision (call runner, settlements, deadlines, publishing). It owns no rule itself.
 */
export class LedgerImpl implements Ledger {
  private readonly clock: () => number;
  private readonly registry = new ToolRegistry();
  private readonly scopes = new ScopeInterner();
  private readonly loop: BatchLoop;
  private readonly events$Subject = new Subject<LedgerEvent>();
  private readonly running = new RunningCalls();
  private readonly callIds = new CallIds();
  private readonly settlements: Settlements;
  private readonly deadlines: CallDeadlines;
  private readonly runner: CallRunner;
  private readonly keyTtlMs: number;
  private readonly keysMax: number;
  private readonly follower: LedgerOptions['transparency'];
  /** What a call's context starts from until admission names its resources. */
  private readonly noneChecked: CheckedResources;
  readonly events$: Observable<LedgerEvent>;
  readonly decisions$: Observable<DecisionEvent>;
  readonly approvals$: Observable<ApprovalEvent>;
  private readonly approvals: ApprovalDesk;

  constructor(options: LedgerOptions, wiring: LedgerWiring, opened?: OpenedAsync) {
    isolateSubscriberErrors();
    this.clock = options.clock ?? Date.now;
    const store = opened?.store ?? options.store ?? wiring.defaultStore();
    if (isAsyncEventStore(store) && opened === undefined) throw new TypeError('this store is asynchronous: open the ledger with `await openLedger(options)`');
    const refundOnError = options.onToolError === 'refund';
    this.keyTtlMs = options.idempotencyTtlMs ?? idempotencyTtlMsDefault;
    if (!Number.isSafeInteger(this.keyTtlMs) || this.keyTtlMs < 1) throw new TypeError('idempotencyTtlMs must be a positive safe integer (ms)');
    this.keysMax = options.idempotencyKeysPerTreeMax ?? limits.idempotencyKeysPerTreeMax;
    if (!Number.isSafeInteger(this.keysMax) || this.keysMax < 1 || this.keysMax > limits.idempotencyKeysPerTreeMax) throw new TypeError(`idempotencyKeysPerTreeMax must be an integer from 1 to ${limits.idempotencyKeysPerTreeMax}`);
    const pendingMax = options.pendingCommandsMax ?? limits.pendingCommandsMax;
    if (!Number.isSafeInteger(pendingMax) || pendingMax < 1) throw new TypeError('pendingCommandsMax must be a positive integer');
    this.follower = options.transparency;
    this.noneChecked = wiring.resources.noneChecked;
    const approvalDefaultMs = options.approvalTimeoutMs ?? approvalTimeoutMsDefault;
    if (!Number.isSafeInteger(approvalDefaultMs) || approvalDefaultMs < 1) throw new TypeError('approvalTimeoutMs must be a positive safe integer (ms)');
    const decider = { clock: this.clock, registry: this.registry, resources: wiring.resources, approvalDefaultMs };
    const publish = (events: readonly LedgerEvent[]): void => this.publish(events);
    this.loop = new BatchLoop(isAsyncEventStore(store) ? undefined : store, opened, { pendingMax, decider, follower: this.follower, publish });
    this.events$ = this.events$Subject.asObservable();
    this.decisions$ = this.events$.pipe(filter((e): e is DecisionEvent => e.type === 'call.admitted' || e.type === 'call.rejected'));
    this.approvals$ = this.events$.pipe(filter((e): e is ApprovalEvent => e.type === 'approval.requested' || e.type === 'approval.resolved'));
    // A shared synchronous store is followed (polled) while an invoke waits; others fold foreign events themselves.
    const shared = !isAsyncEventStore(store) && isSharedEventStore(store);
    this.approvals = new ApprovalDesk(this.loop, this.clock, options.setTimer ?? systemSetTimer, shared ? () => this.loop.catchUp() : undefined);
    this.settlements = new Settlements(this.loop, store);
    this.deadlines = new CallDeadlines(this.loop, this.settlements, this.running, this.clock, options.setTimer ?? systemSetTimer, refundOnError);
    const hops = {
      scopesOf: (grantId: string) => shardGet(this.loop.current.grants, grantId)?.scope.resources ?? [],
      decideHop: decideHop.bind(undefined, this.loop),
      resolveHost: options.resolveHost ?? wiring.resolveHost,
    };
    const { registry, running, deadlines, settlements, callIds, loop, approvals } = this;
    this.runner = new CallRunner({ loop, registry, resources: wiring.resources, hops, running, deadlines, settlements, callIds, refundOnError, approvals });
    this.settlements.settleKept();
    // What a crash (or another writer) left open is timed out once its deadline passes; settlements
    // taken over from the journal were decided first and are already queued ahead of any timeout.
    this.deadlines.scheduleOpen();
    this.approvals.scheduleOpen();
  }

  // ---- approvals (host side; docs/approvals.md) ----------------------------------------------

  pendingApprovals(): readonly PendingApprovalView[] {
    this.loop.catchUp();
    return this.approvals.pending();
  }

  approve(approvalId: string, options: ApproveOptions): Promise<ApproveOutcome> {
    return this.approvals.approve(approvalId, options);
  }

  deny(approvalId: string, options: DenyOptions): Promise<DenyOutcome> {
    return this.approvals.deny(approvalId, options);
  }

  // ---- host side -------------------------------------------------------------------------------

  async registerTool<Args extends JsonObject, Result>(tool: ToolDefinition<Args, Result>): Promise<void> {
    const { definition, inputSchema, validate } = checkToolDefinition(this.registry, tool);
    await runHost(this.loop, (at) => ({ type: 'registerTool', at, tool: definition.name, inputSchema }));
    this.registry.attach(definition, validate);
  }

  async issue(options: IssueOptions): Promise<IssuedGrant> {
    const args = checkIssueArgs(this.registry, this.loop.current, options);
    const approvals = checkIssueApprovals(this.registry, this.loop.current, options);
    const templates = issueTemplates(options);
    const token = newToken();
    // A principal's grant id is derived (src/domain/principals.ts); the decider refuses it if another
    // writer took that generation meanwhile.
    const principalName = hostPrincipal(options.principal);
    const principal = principalName === undefined ? undefined : nextPrincipalRef(this.state(), principalName);
    const grantId = principal === undefined ? newGrantId() : principalGrantId(principal.name, principal.policy, principal.generation);
    const plan = { grantId, tokenDigest: tokenDigest(token), args, templates, principal, ...(approvals !== undefined ? { approvals } : {}) };
    await runHost(this.loop, (at) => issueCommand(at, options, plan, this.scopes));
    return { grantId, token };
  }

  async revoke(grantId: string, options: RevokeOptions = {}): Promise<void> {
    if (typeof grantId !== 'string') throw new TypeError('revoke needs a grant id');
    const abortInFlight = options.abortInFlight === true;
    await runHost(this.loop, (at) => ({ type: 'revoke', at, grantId, abortInFlight }));
    // Local calls are aborted here; foreign revocations are handled while catching up.
    if (abortInFlight) this.running.abortGrant(grantId);
  }

  usage(grantId: string): Usage {
    this.loop.catchUp();
    const grant = shardGet(this.loop.current.grants, grantId);
    if (grant === undefined) throw new TypeError('no grant has that id');
    return grantUsage(grant, this.clock);
  }

  visibleTools(token: string): readonly VisibleTool[] {
    return this.visibleToolsOfDigest(() => presentedTokenDigest(token));
  }

  visibleToolsOfGrant(grantId: string): readonly VisibleTool[] {
    return this.visibleToolsOfDigest(() => this.grantDigest(grantId));
  }

  private visibleToolsOfDigest(digestOf: () => string | undefined): readonly VisibleTool[] {
    // Agent-facing: never throws (a failing shared store or clock shows nothing rather than too much).
    try {
      const digest = digestOf();
      if (digest === undefined) return [];
      this.loop.catchUp();
      const at = this.clock();
      if (typeof at !== 'number' || !Number.isFinite(at)) return [];
      return visibleTools(this.loop.current, shardGet(this.loop.current.tokens, digest), at);
    } catch {
      return [];
    }
  }

  events(): readonly LedgerEvent[] {
    this.loop.catchUp();
    return this.loop.events();
  }

  state(): LedgerState {
    this.loop.catchUp();
    return this.loop.frozenState();
  }

  inFlight(): readonly InFlightCall[] {
    this.loop.catchUp();
    return Object.freeze(Array.from(shardValues(this.loop.current.inFlight)).sort((a, b) => a.seq - b.seq));
  }

  async runDueTimeouts(): Promise<number> {
    this.loop.catchUp();
    const approvals = await this.approvals.runDue();
    return approvals + (await this.deadlines.runDue());
  }

  async close(): Promise<void> {
    if (this.loop.closing) return;
    this.loop.closing = true;
    // Invokes waiting for a person answer now; their approvals stay pending in the log.
    this.approvals.stop();
    await this.loop.idle();
    // Settlements still retrying get one more attempt now; what does not land stays in the journal.
    this.settlements.wakeRetries();
    while (this.running.size > 0) {
      await this.running.noneRunning();
      await this.loop.idle();
    }
    while (this.settlements.pending > 0) await this.settlements.drain();
    this.deadlines.stop();
    await this.loop.idle();
    this.loop.stop();
    this.follower?.close?.();
    this.events$Subject.complete();
    await this.loop.closeStore();
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

  private grantDigest(grantId: unknown): string | undefined {
    if (typeof grantId !== 'string') return undefined;
    try {
      this.loop.catchUp();
      return shardGet(this.loop.current.grants, grantId)?.tokenDigest;
    } catch {
      return undefined; // a failing shared store: the call is then refused as unknown, never run
    }
  }

  private async invokeDigest<Result>(digest: string | undefined, tool: string, args: unknown, options?: InvokeOptions | KeyedInvokeOptions): Promise<KeyedInvokeOutcome<Result>> {
    const ordinal = this.callIds.take();
    const callId = this.callIds.id(ordinal);
    if (this.loop.closing) return rejected(callId, 'ledger_unavailable');
    const toolName = typeof tool === 'string' && toolNamePattern.test(tool) ? tool : invalidToolName;
    const snapshot = snapshotArguments(args);
    const read = readInvokeOptions(options);
    const key = read === 'unreadable' ? undefined : read.idempotencyKey;
    const idempotency = read === 'unreadable' ? 'invalid' : key === undefined ? undefined : keyedCall(key, toolName, snapshot, this.keyTtlMs, this.keysMax);
    const loop = this.loop;
    const none = this.noneChecked;
    // One request object per call, built where its `done` exists (a burst keeps 100,000 of them alive).
    let request: InvokeRequest | undefined;
    const result = await new Promise<BatchResult>((resolve) => {
      request = idempotency === undefined
        ? { kind: 'invoke', callId, tokenDigest: digest, tool: toolName, args: snapshot, done: resolve, queuedAt: loop.queuedAt(), checked: none }
        : { kind: 'invoke', callId, tokenDigest: digest, tool: toolName, args: snapshot, done: resolve, queuedAt: loop.queuedAt(), checked: none, idempotency };
      if (!loop.submit(request)) resolve({ kind: 'unavailable', cause: 'queue full' });
    });
    return this.runner.outcome<Result>(result, request as InvokeRequest, ordinal, snapshot, read === 'unreadable' ? undefined : read.signal);
  }

  // ---- agent side: delegation ------------------------------------------------------------------

  async attenuate(token: string, request: AttenuationRequest): Promise<AttenuateOutcome> {
    try {
      if (this.loop.closing) return attenuationUnavailable;
      const digest = presentedTokenDigest(token);
      const checked = checkAttenuationRequest(this.registry.compiler, request, (tool) => inputSchemaOf(this.loop.current, tool));
      const child = { grantId: newGrantId(), token: newToken() };
      const childDigest = tokenDigest(child.token);
      const events = await runAgent(this.loop, (at, state) => ({
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
      if (this.loop.closing) return revocationUnavailable;
      const digest = presentedTokenDigest(token);
      const target = targetGrantId(grantId);
      const abortInFlight = options !== null && typeof options === 'object' && options.abortInFlight === true;
      // A granted revocation with abortInFlight reaches the subtree's running calls when published.
      const events = await runAgent(this.loop, (at, state) => ({ type: 'revokeDelegation', at, byGrantId: digest === undefined ? undefined : shardGet(state.tokens, digest), grantId: target, abortInFlight }));
      return events === undefined ? revocationUnavailable : revokeDelegationOutcome(events);
    } catch {
      return revocationUnavailable;
    }
  }

  // ---- after commit ----------------------------------------------------------------------------

  /** Every committed event: to the transparency follower, to running calls it aborts, then to subscribers. */
  private publish(events: readonly LedgerEvent[]): void {
    if (events.length > 0) this.follower?.appended(events);
    for (const event of events) {
      if (event.type === 'grant.revoked' && event.abortInFlight) this.running.abortGrant(event.grantId);
      if (event.type === 'call.failed' && event.timedOut === true) this.deadlines.timedOutHere(event.callId);
      this.approvals.observe(event);
      this.events$Subject.next(event);
    }
  }
}

/** Opens a ledger: rebuilds state from the store's log (refusing a log that does not verify). */
export function createLedgerWith(options: LedgerOptions, wiring: LedgerWiring): Ledger {
  return new LedgerImpl(options, wiring);
}

/**
 * Opens a ledger on any store: resolves once the store is open and the state rebuilt. An
 * asynchronous store (PostgreSQL) is connected and migrated first; a synchronous one opens as in
 * `createLedger`. Rejects with LedgerError when the store cannot be opened or its log does not verify.
 */
export async function openLedgerWith(options: LedgerOptions, wiring: LedgerWiring): Promise<Ledger> {
  const store = options.store;
  if (store === undefined || !isAsyncEventStore(store)) return createLedgerWith(options, wiring);
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
  return new LedgerImpl(options, wiring, { store, state, events });
}
