import { ownApprovalRule } from '../../domain/approvalSpec';
import { ancestorRecords } from '../../domain/grantChain';
import { shardGet } from '../../domain/shardedMap';
import type { GrantRecord, LedgerState } from '../../domain/state';
import { presentedTokenDigest } from '../../stream/ids';
import { snapshotArguments } from '../../tools/arguments';
import { SchemaCompiler, type ArgumentValidator } from '../../tools/schemas';

/** The grant a token names, read from a ledger's folded state (undefined for an unknown token). */
export function grantOfToken(state: LedgerState, token: string): GrantRecord | undefined {
  const digest = presentedTokenDigest(token);
  const grantId = digest === undefined ? undefined : shardGet(state.tokens, digest);
  return grantId === undefined ? undefined : shardGet(state.grants, grantId);
}

/**
 * Whether the ledger would ask a person about this call: any grant of the chain (root first) has an
 * approval rule for the tool that is `true` or a schema these arguments match. The same rules the
 * ledger applies at admission (stream/approvalAsk.ts), read from the folded state; a schema that no
 * longer compiles asks (fail closed, as the ledger does). Pure: no I/O, no clock.
 */
export class ApprovalCheck {
  private readonly compiler = new SchemaCompiler();
  private readonly compiled = new WeakMap<object, ArgumentValidator | 'always'>();

  asks(state: LedgerState, grant: GrantRecord, tool: string, input: unknown): boolean {
    const snapshot = snapshotArguments(input);
    if (!snapshot.ok) return false; // the ledger rejects these arguments before asking anyone
    const chain = ancestorRecords(state, grant);
    if (chain === undefined) return false; // a broken chain is rejected, never asked about
    for (const record of [...chain, grant]) {
      const rule = ownApprovalRule(record, tool);
      if (rule === undefined) continue;
      if (rule === true) return true;
      const validator = this.validator(rule, record.parentGrantId === undefined ? 'host' : 'agent');
      if (validator === 'always' || validator(snapshot.value)) return true;
    }
    return false;
  }

  private validator(schema: object, from: 'host' | 'agent'): ArgumentValidator | 'always' {
    let validator = this.compiled.get(schema);
    if (validator === undefined) {
      try {
        validator = this.compiler.compileNarrowing(schema as Parameters<SchemaCompiler['compileNarrowing']>[0], from);
      } catch {
        validator = 'always';
      }
      this.compiled.set(schema, validator);
    }
    return validator;
  }
}
