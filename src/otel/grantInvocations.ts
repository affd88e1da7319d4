import type { InvokeOptions, InvokeOutcome, Ledger } from '../stream/types';
import type { GrantInvoke } from '../integrations/mcp/telemetry';
import { instrumentCalls, type InstrumentLedgerOptions, type Invoke } from './instrumentLedger';

/**
 * The gateway acts for grants (`invokeAsGrant`), not tokens: the same instrumentation as
 * `instrumentLedger`'s `invoke` (one `execute_tool` span per call, the same attributes and metrics),
 * around `invokeAsGrant`. A grant id is no secret, and the span takes its attributes from the logged
 * events anyway.
 */
export function instrumentGrantInvocations(ledger: Ledger, options: InstrumentLedgerOptions = {}): GrantInvoke {
  const asGrant: Invoke = (grantId, tool, args, invokeOptions) => ledger.invokeAsGrant(grantId, tool, args, invokeOptions as InvokeOptions | undefined);
  const { invoke } = instrumentCalls(ledger, asGrant, options);
  return <Result>(grantId: string, tool: string, args: unknown, invokeOptions?: InvokeOptions) => invoke(grantId, tool, args, invokeOptions ?? {}) as Promise<InvokeOutcome<Result>>;
}
