import type { JsonObject } from '../domain/json';
import type { GrantRecord } from '../domain/state';
import { SchemaCompiler, type ArgumentValidator } from '../tools/schemas';
import type { ToolDefinition } from './types';

export interface AttachedTool {
  readonly definition: ToolDefinition<JsonObject, unknown>;
  readonly validate: ArgumentValidator;
}

/** Tool implementations attached to this ledger object, and compiled validators (host side). */
export class ToolRegistry {
  readonly compiler = new SchemaCompiler();
  private readonly tools = new Map<string, AttachedTool>();
  private readonly narrowing = new Map<string, ArgumentValidator | null>();

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): AttachedTool | undefined {
    return this.tools.get(name);
  }

  attach(definition: ToolDefinition<JsonObject, unknown>, validate: ArgumentValidator): void {
    this.tools.set(definition.name, { definition, validate });
  }

  /** The grant's narrowing validator for a tool, compiled on first use (cached by schema). */
  narrowingFor(grant: GrantRecord, tool: string): ArgumentValidator | null {
    const key = `${grant.grantId}\u0000${tool}`;
    let validator = this.narrowing.get(key);
    if (validator === undefined) {
      const schema = Object.prototype.hasOwnProperty.call(grant.scope.args, tool) ? grant.scope.args[tool] : undefined;
      validator = schema === undefined ? null : this.compiler.compileNarrowing(schema);
      this.narrowing.set(key, validator);
    }
    return validator;
  }
}
