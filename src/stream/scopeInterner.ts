import { freeze } from 'immer';
import { canonicalJson } from '../domain/canonicalJson';
import type { GrantScope } from '../domain/events';

/**
 * Gives grants issued through one ledger object the same deep-frozen value for equal scope parts
 * (tool list, narrowing schemas, resource scopes, budget), keyed by their canonical JSON.
 *
 * Why: hosts issue the same policy to many agents. With a value per grant, 100,000 grants hold
 * 100,000 copies of one schema, each call on a rarely used grant reads cold copies, and the
 * narrowing validator cache (keyed by schema object, toolRegistry.ts) gets an entry per grant, made
 * on that grant's first call. Shared values keep one cache entry and one copy hot. The log is not
 * affected: events are stored as JSON, where sharing is invisible. Grants folded from a stored log
 * are not interned (the fold stays pure); they take the per-grant path on first use.
 *
 * Bounded: past `capacity` distinct parts the oldest is forgotten (its grants keep their value).
 */
export class ScopeInterner {
  private readonly parts = new Map<string, unknown>();

  constructor(private readonly capacity = 4_096) {}

  /** `scope` with its tools, args, resources and budget replaced by shared, deep-frozen equals. */
  share(scope: GrantScope): GrantScope {
    // Approval rules (rarer): every field kept, the rules interned as the narrowings are.
    if (scope.approvals !== undefined || scope.approvalTimeoutMs !== undefined) {
      const shared: { -readonly [K in keyof GrantScope]: GrantScope[K] } = { tools: this.intern(scope.tools), args: this.intern(scope.args), resources: this.intern(scope.resources), notBefore: scope.notBefore, expiresAt: scope.expiresAt, budget: this.intern(scope.budget) };
      if (scope.callTimeoutMs !== undefined) shared.callTimeoutMs = scope.callTimeoutMs;
      if (scope.approvals !== undefined) shared.approvals = this.intern(scope.approvals);
      if (scope.approvalTimeoutMs !== undefined) shared.approvalTimeoutMs = scope.approvalTimeoutMs;
      return shared;
    }
    // A literal, not `{ ...scope, … }`: the spread-and-override object took ≈ 90 B more per grant.
    if (scope.callTimeoutMs !== undefined) {
      return {
        tools: this.intern(scope.tools),
        args: this.intern(scope.args),
        resources: this.intern(scope.resources),
        notBefore: scope.notBefore,
        expiresAt: scope.expiresAt,
        budget: this.intern(scope.budget),
        callTimeoutMs: scope.callTimeoutMs,
      };
    }
    return {
      tools: this.intern(scope.tools),
      args: this.intern(scope.args),
      resources: this.intern(scope.resources),
      notBefore: scope.notBefore,
      expiresAt: scope.expiresAt,
      budget: this.intern(scope.budget),
    };
  }

  private intern<T>(value: T): T {
    if (value === null || typeof value !== 'object') return value; // a malformed scope: decide refuses it
    const key = canonicalJson(value);
    const known = this.parts.get(key);
    if (known !== undefined) return known as T;
    const frozen = freeze(value, true);
    if (this.parts.size >= this.capacity) this.parts.delete(this.parts.keys().next().value as string);
    this.parts.set(key, frozen);
    return frozen;
  }
}
