import type { InvokeOptions, InvokeOutcome, Ledger } from '../stream/types';
import type { GrantInvoke } from '../integrations/mcp/telemetry';
import { instrumentLedger, type InstrumentLedgerOptions } from './instrumentLedger';

/**
 * The gateway acts for grants (`invokeAsGrant`), not tokens, while `instrumentLedger` instruments
 * `invoke`. So it instruments a view of the ledger whose `invoke` takes a grant id and calls
 * `invokeAsGrant`; every other member is the ledger's own, bound to it (state is never written on
 * the view). The returned function runs each call inside the same `execute_tool` span, with the same
 * attributes and metrics, as an instrumented `invoke`. A grant id is no secret, and the span takes
 * its attributes from the logged events anyway.
 */
export function instrumentGrantInvocations(ledger: Ledger, options: InstrumentLedgerOptions = {}): GrantInvoke {
  const asGrant = (grantId: string, tool: string, args: unknown, invokeOptions?: InvokeOptions): Promise<InvokeOutcome<unknown>> => ledger.invokeAsGrant(grantId, tool, args, invokeOptions);
  let invoke: unknown = asGrant;
  const view = new Proxy(ledger, {
    get: (target, key) => {
      if (key === 'invoke') return invoke;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    // instrumentLedger installs its wrapper as an own property: kept on the view, never on the ledger.
    defineProperty: (_target, key, descriptor) => {
      if (key !== 'invoke' || !('value' in descriptor)) return false;
      invoke = descriptor.value;
      return true;
    },
    deleteProperty: (_target, key) => {
      if (key !== 'invoke') return false;
      invoke = asGrant;
      return true;
    },
  });
  instrumentLedger(view, options);
  return <Result>(grantId: string, tool: string, args: unknown, invokeOptions?: InvokeOptions) => view.invoke<Result>(grantId, tool, args, invokeOptions ?? {}) as Promise<InvokeOutcome<Result>>;
}
