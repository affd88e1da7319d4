import type { AdmitCommand, ApprovalAsk, Command } from '../domain/commands';
import { approvalAsk, approvalFanOut, approvalTimeoutMsDefault, chainAsks } from './approvalAsk';
import { checkAuthority } from '../domain/decide';
import type { MeterAmounts } from '../domain/events';
import type { JsonObject } from '../domain/json';
import { meterAmountsSnapshot } from '../domain/meters';
import type { ArgumentCheck, ResourceCheck } from '../domain/reasons';
import { checkResources } from '../domain/resources';
import { shardGet } from '../domain/shardedMap';
import type { GrantRecord, LedgerState } from '../domain/state';
import type { ArgumentSnapshot } from '../tools/arguments';
import type { CheckedResources, ToolResources } from './ports/toolResources';
import { limits } from '../domain/limits';
import type { ArgumentValidator } from '../tools/schemas';
import type { ToolRegistry } from './toolRegistry';
import type { ResourceCall, ToolDefinition } from './types';

/** An agent's call as the stream holds it: nothing the agent sent is kept in its raw form. */
export interface AgentCall {
  readonly callId: string;
  readonly tokenDigest: string | undefined;
  readonly tool: string;
  readonly args: ArgumentSnapshot;
  /** The call's idempotency key as digests (`'invalid'`: a key that is not 1-255 characters). */
  readonly idempotency?: KeyedCall | 'invalid';
}

/** A keyed call's digests and how long its binding would live. */
export interface KeyedCall {
  readonly keyDigest: string;
  readonly argsDigest: string;
  readonly ttlMs: number;
  readonly keysMax: number;
}

/**
 * Turns an agent's call into a pure admit command: the host-side checks (ajv schemas, the tool's
 * `resources(args)`) run here, in the shell, and only when they can matter (the authority checks
 * that need just the log pass first); `decide` receives their outcomes. `undefined` when the tool
 * is in the log but has no implementation attached in this process.
 */
export function admitCommand(
  registry: ToolRegistry,
  state: LedgerState,
  call: AgentCall,
  at: number,
  /** Told what an admissible call's resources were (and what `fsResource` resolved), for `ctx.open`. */
  onChecked?: (checked: CheckedResources) => void,
  /** Told, for a call refused on its arguments, what failed (for the agent's outcome; never logged). */
  onRefused?: (refusal: ArgumentRefusal) => void,
  /** Gathers what resource helpers resolved while `resources(args)` ran (without it, nothing is gathered). */
  resources?: Pick<ToolResources, 'collectChecks'>,
  /** The ledger's default wait for an approval (ms of log time). */
  approvalDefaultMs: number = approvalTimeoutMsDefault,
): Command | undefined {
  const grantId = call.tokenDigest === undefined ? undefined : shardGet(state.tokens, call.tokenDigest);
  let argumentCheck: ArgumentCheck = 'ok';
  let resourceCheck: ResourceCheck = 'ok';
  let cost: MeterAmounts | undefined;
  let approval: ApprovalAsk | undefined;
  const authority = checkAuthority(state, grantId, call.tool, at);
  if (authority.ok) {
    const attached = registry.get(call.tool);
    if (attached === undefined) return undefined;
    if (!call.args.ok || call.idempotency === 'invalid' || !attached.validate(call.args.value)) {
      argumentCheck = 'invalid_arguments';
      onRefused?.({ reason: argumentCheck, message: invalidArgumentsMessage(call, attached.validate) });
    } else {
      const narrowing = narrowingRefusal(registry, authority.ancestors, authority.grant, call.tool, call.args);
      if (narrowing !== undefined) {
        argumentCheck = 'argument_not_permitted';
        onRefused?.({ reason: argumentCheck, message: narrowing });
      }
      // A child's resource scopes are each covered by its parent's (checked at issue): its own decide.
      else resourceCheck = checkNamedResources(attached.definition, call.args.value, resourceCallOf(authority.grant), authority.grant.scope.resources, onChecked, resources);
      // Priced only when it can matter (every check before the budgets passed).
      if (resourceCheck === 'ok' && argumentCheck === 'ok' && attached.definition.cost !== undefined) {
        const priced = evaluateCost(attached.definition, call.args.value);
        if (priced === 'invalid') {
          argumentCheck = 'invalid_arguments';
          onRefused?.({ reason: argumentCheck, message: "the tool's cost(args) could not price these arguments (the host's cost function threw or returned no meter amounts)" });
        } else cost = priced;
      }
      // Last of the shell's checks (decide then checks budgets first): does the chain ask a person?
      if (resourceCheck === 'ok' && argumentCheck === 'ok' && chainAsks(registry, authority.ancestors, authority.grant, call.tool, call.args.value)) {
        approval = approvalAsk(call.tool, call.args.canonical, approvalDefaultMs);
      }
    }
  }
  // Optional fields added to one literal rather than spread from conditional objects: this runs for
  // every call, and each such spread is a runtime copy (as in settleCommand, ledger.ts).
  const command: { -readonly [K in keyof AdmitCommand]: AdmitCommand[K] } = {
    type: 'admit',
    at,
    callId: call.callId,
    grantId,
    tool: call.tool,
    inputBytes: call.args.ok ? call.args.bytes : undefined,
    argumentCheck,
    resourceCheck,
  };
  if (cost !== undefined) command.cost = cost;
  if (approval !== undefined) command.approval = approval;
  const key = call.idempotency;
  if (key !== undefined && key !== 'invalid') command.idempotency = { keyDigest: key.keyDigest, argsDigest: key.argsDigest, expiresAt: at + key.ttlMs, keysMax: key.keysMax };
  return command;
}

/**
 * The tool's `cost(args)`: the most the call may use per meter. A cost that throws or returns
 * anything but a map of meter names to non-negative safe integers is the host's bug; the call is
 * refused `invalid_arguments` (it cannot be priced: fail closed). An empty map reserves nothing.
 */
function evaluateCost(tool: ToolDefinition<JsonObject, unknown>, args: JsonObject): MeterAmounts | undefined | 'invalid' {
  let value: unknown;
  try {
    value = (tool.cost as (args: JsonObject) => unknown)(args);
  } catch {
    return 'invalid';
  }
  // Read once into a plain copy in name order, then checked: host code may keep and change its
  // object, or answer a second read differently.
  const snapshot = meterAmountsSnapshot(value, 'cost');
  if (!snapshot.ok) return 'invalid';
  return Object.keys(snapshot.amounts).length === 0 ? undefined : snapshot.amounts;
}

/** What an agent is told about a call refused on its arguments (see narrowingRefusal, invalidArgumentsMessage). */
export interface ArgumentRefusal {
  readonly reason: 'invalid_arguments' | 'argument_not_permitted';
  readonly message: string;
}

function invalidArgumentsMessage(call: AgentCall, validate: ArgumentValidator): string {
  if (!call.args.ok) return `the arguments are not a plain JSON object of at most ${limits.argumentBytesMax} canonical bytes and ${limits.argumentDepthMax} levels`;
  if (call.idempotency === 'invalid') return `the idempotency key is not a string of 1-${limits.idempotencyKeyCharsMax} characters`;
  return `the arguments do not satisfy the tool's input schema: ${validate.explain()}`;
}

/**
 * Every narrowing schema along the chain (root first, the grant last) must accept the arguments;
 * undefined when they do, else what failed. The narrowings agents made (grants issued by `attenuate`)
 * are first bounded in work: their fan-out weight times the call's bytes (limits.narrowingWorkMax).
 */
function narrowingRefusal(registry: ToolRegistry, ancestors: readonly GrantRecord[], grant: GrantRecord, tool: string, args: Extract<ArgumentSnapshot, { ok: true }>): string | undefined {
  let weight = agentFanOut(registry, grant, tool);
  for (const ancestor of ancestors) weight += agentFanOut(registry, ancestor, tool);
  const work = weight * args.bytes;
  if (work > limits.narrowingWorkMax) {
    return `the narrowings made by attenuate along this grant's chain would cost ${work} work units on ${args.bytes} bytes of arguments, over the bound of ${limits.narrowingWorkMax} (send fewer bytes, or narrow items and members less)`;
  }
  for (const record of ancestors) {
    const narrowing = registry.narrowingFor(record, tool);
    if (narrowing !== null && !narrowing(args.value)) return `the arguments fall outside a narrowing schema of the grant's chain: ${narrowing.explain()}`;
  }
  const narrowing = registry.narrowingFor(grant, tool);
  if (narrowing !== null && !narrowing(args.value)) return `the arguments fall outside the grant's narrowing schema: ${narrowing.explain()}`;
  return undefined;
}

/** The fan-out weight of a grant's narrowing for a tool when an agent made it (by attenuate), else 0. */
function agentFanOut(registry: ToolRegistry, grant: GrantRecord, tool: string): number {
  if (grant.parentGrantId === undefined) return 0;
  // An agent's approval rule is matched on every call too: its work counts against the same bound.
  return (registry.narrowingFor(grant, tool)?.fanOut ?? 0) + approvalFanOut(registry, grant, tool);
}

/** Which grant a call acts for, as `resources(args, call)` sees it (a child maps as its root does). */
function resourceCallOf(grant: GrantRecord): ResourceCall {
  return { grantId: grant.grantId, rootGrantId: grant.ancestors?.[0] ?? grant.grantId };
}

function checkNamedResources(tool: ToolDefinition<JsonObject, unknown>, args: JsonObject, call: ResourceCall, scopes: readonly string[], onChecked?: (checked: CheckedResources) => void, runtime?: Pick<ToolResources, 'collectChecks'>): ResourceCheck {
  if (tool.resources === undefined) return 'ok';
  const resources = tool.resources;
  let named: unknown;
  try {
    if (runtime === undefined) named = resources(args, call);
    else {
      const collected = runtime.collectChecks(() => resources(args, call));
      named = collected.value;
      // A copy: the tool's array is host code's to change after the check.
      if (Array.isArray(named) && onChecked !== undefined) onChecked({ resources: Object.freeze(named.slice() as string[]), fsChecks: collected.checks });
    }
  } catch {
    return 'invalid_resource'; // fail closed: we cannot tell what the call would touch
  }
  if (!Array.isArray(named)) return 'invalid_resource';
  return checkResources(named, scopes);
}
