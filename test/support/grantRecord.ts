import type { GrantBudget, GrantScope } from '../../src/domain/events';
import type { GrantRecord } from '../../src/domain/state';

/** A grant record as evolve would hold it, for tests of the decider's helpers (no ledger, no log). */
export type GrantRecordOverrides = Omit<Partial<GrantRecord>, 'scope'> & { budget?: Partial<GrantBudget>; scope?: Partial<GrantScope> };

export function grantRecord(overrides: GrantRecordOverrides = {}): GrantRecord {
  const { budget, scope, ...record } = overrides;
  return {
    grantId: 'g',
    tokenDigest: 'd',
    scope: { tools: ['notes'], args: {}, resources: [], notBefore: 0, expiresAt: 10_000, budget: { calls: 10, inputBytes: 1_000, ...budget }, ...scope },
    revoked: false,
    used: { calls: 0, inputBytes: 0 },
    issuedAt: 0,
    ...record,
  };
}
