import type { JsonObject } from '../domain/json';
import type { GrantRecord } from '../domain/state';
import { ownApprovalRule } from '../domain/approvalSpec';
import { SchemaCompiler, type ArgumentValidator } from '../tools/schemas';
import type { ToolDefinition } from './types';

export interface AttachedTool {
  readonly definition: ToolDefinition<JsonObject, unknown>;
  readonly validate: ArgumentValidator;
}

const refuseAll: ArgumentValidator = Object.assign(() => false, { explain: () => '/: the narrowing no longer compiles, so it permits nothing', fanOut: 0 });

/** Tool implementations attached to this ledger object, and compiled validators (host side). */
export class ToolRegistry {
  readonly compiler = new SchemaCompiler();
  private readonly tools = new Map<string, AttachedTool>();
  // Keyed by the grant's (frozen, shared) narrowing schema object: no per-call key string, and the
  // entry goes away with the grant's state.
  private readonly narrowing = new WeakMap<object, ArgumentValidator>();

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): AttachedTool | undefined {
    return this.tools.get(name);
  }

  attach(definition: ToolDefinition<JsonObject, unknown>, validate: ArgumentValidator): void {
    this.tools.set(definition.name, { definition, validate });
  }

  /** The grant's narrowing validator for a tool, or null when it has none (compiled on first use, cached by schema). */
  narrowingFor(grant: GrantRecord, tool: string): ArgumentValidator | null {
    const schema = Object.prototype.hasOwnProperty.call(grant.scope.args, tool) ? grant.scope.args[tool] : undefined;
    if (schema === undefined) return null;
    return this.compiled(grant, schema);
  }

  /**
   * The grant's own approval rule for a tool: `true`, a compiled schema (compiled and bounded as a
   * narrowing: an agent's rules under the agent's bounds), or null. A rule that no longer compiles
   * asks about every call (fail closed: `refuseAll` never matches, so it is mapped to `true`).
   */
  approvalRuleFor(grant: GrantRecord, tool: string): true | ArgumentValidator | null {
    const rule = ownApprovalRule(grant, tool);
    if (rule === undefined) return null;
    if (rule === true) return true;
    const validator = this.compiled(grant, rule);
    return validator === refuseAll ? true : validator;
  }

  private compiled(grant: GrantRecord, schema: JsonObject): ArgumentValidator {
    let validator = this.narrowing.get(schema);
    if (validator === undefined) {
      try {
        // A child grant's narrowing is an agent's: compiled under the agent's bounds, as at attenuate.
        validator = this.compiler.compileNarrowing(schema, grant.parentGrantId === undefined ? 'host' : 'agent');
      } catch {
        // Only a grant from a stored log can get here (issue compiles first), e.g. one issued before
        // schemas were strict: a narrowing that cannot be compiled permits nothing.
        validator = refuseAll;
      }
      this.narrowing.set(schema, validator);
    }
    return validator;
  }
}
