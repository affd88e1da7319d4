import type { AdmitCommand, Command } from '../domain/commands';
import { checkAuthority } from '../domain/decide';
import type { MeterAmounts } from '../domain/events';
import type { JsonObject } from '../domain/json';
import { meterAmountsSnapshot } from '../domain/meters';
import type { ArgumentCheck, ResourceCheck } from '../domain/reasons';
import { checkResources } from '../domain/resources';
import { shardGet } from '../domain/shardedMap';
import type { GrantRecord, LedgerState } from '../domain/state';
import type { ArgumentSnapshot } from '../tools/arguments';
import { collectFsChecks } from '../resources/fs/fsChecks';
import type { CheckedResources } from '../resources/toolContext';
import type { ToolRegistry } from './toolRegistry';
import type { ToolDefinition } from './types';

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
): Command | undefined {
  const grantId = call.tokenDigest === undefined ? undefined : shardGet(state.tokens, call.tokenDigest);
  let argumentCheck: ArgumentCheck = 'ok';
  let resourceCheck: ResourceCheck = 'ok';
  let cost: MeterAmounts | undefined;
  const authority = checkAuthority(state, grantId, call.tool, at);
  if (authority.ok) {
    const attached = registry.get(call.tool);
    if (attached === undefined) return undefined;
    if (!call.args.ok || call.idempotency === 'invalid' || !attached.validate(call.args.value)) {
      argumentCheck = 'invalid_arguments';
    } else {
      if (!passesNarrowing(registry, authority.ancestors, authority.grant, call.tool, call.args.value)) argumentCheck = 'argument_not_permitted';
      // A child's resource scopes are each covered by its parent's (checked at issue): its own decide.
      else resourceCheck = checkNamedResources(attached.definition, call.args.value, authority.grant.scope.resources, onChecked);
      // Priced only when it can matter (every check before the budgets passed).
      if (resourceCheck === 'ok' && argumentCheck === 'ok' && attached.definition.cost !== undefined) {
        const priced = evaluateCost(attached.definition, call.args.value);
        if (priced === 'invalid') argumentCheck = 'invalid_arguments';
        else cost = priced;
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

/** Every narrowing schema along the chain (root first, the grant last) must accept the arguments. */
function passesNarrowing(registry: ToolRegistry, ancestors: readonly GrantRecord[], grant: GrantRecord, tool: string, args: JsonObject): boolean {
  for (const ancestor of ancestors) {
    const narrowing = registry.narrowingFor(ancestor, tool);
    if (narrowing !== null && !narrowing(args)) return false;
  }
  const narrowing = registry.narrowingFor(grant, tool);
  return narrowing === null || narrowing(args);
}

function checkNamedResources(tool: ToolDefinition<JsonObject, unknown>, args: JsonObject, scopes: readonly string[], onChecked?: (checked: CheckedResources) => void): ResourceCheck {
  if (tool.resources === undefined) return 'ok';
  const resources = tool.resources;
  let named: unknown;
  try {
    const collected = collectFsChecks(() => resources(args));
    named = collected.value;
    // A copy: the tool's array is host code's to change after the check.
    if (Array.isArray(named) && onChecked !== undefined) onChecked({ resources: Object.freeze(named.slice() as string[]), fsChecks: collected.checks });
  } catch {
    return 'invalid_resource'; // fail closed: we cannot tell what the call would touch
  }
  if (!Array.isArray(named)) return 'invalid_resource';
  return checkResources(named, scopes);
}
