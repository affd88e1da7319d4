import { createLedger, type EventStore, type Ledger, type LogFollower } from '../../src';
import { inputSchema, policy, request } from './policy';

export interface OursSetup {
  readonly ledger: Ledger;
  readonly tokens: readonly string[];
  readonly grantIds: readonly string[];
}

export interface OursOptions {
  readonly grants?: number;
  readonly store?: EventStore;
  readonly pendingCommandsMax?: number;
  readonly callsBudget?: number;
  readonly transparency?: LogFollower;
}

/** A ledger with the policy's tool (a no-op) and `grants` grants, issued in concurrent chunks. */
export async function oursLedger(options: OursOptions = {}): Promise<OursSetup> {
  const ledger = createLedger({
    ...(options.store ? { store: options.store } : {}),
    ...(options.pendingCommandsMax ? { pendingCommandsMax: options.pendingCommandsMax } : {}),
    ...(options.transparency ? { transparency: options.transparency } : {}),
  });
  // On a reopened log the tool is already registered: registering again only re-attaches it.
  await ledger.registerTool({
    name: policy.tool,
    inputSchema,
    resources: (args: { path: string; length: number }) => [`fs:/${args.path}`],
    run: async () => undefined,
  });
  const tokens: string[] = [];
  const grantIds: string[] = [];
  const total = options.grants ?? 1;
  for (let done = 0; done < total; ) {
    const chunk = Math.min(1_000, total - done);
    const issued = await Promise.all(
      Array.from({ length: chunk }, () =>
        ledger.issue({
          tools: [policy.tool],
          args: { [policy.tool]: { properties: { length: { maximum: policy.lengthMax } } } },
          resources: [`fs:/${policy.pathPrefix}`],
          expiresAt: Date.now() + 24 * 3_600_000,
          budget: { calls: options.callsBudget ?? policy.callsBudget, inputBytes: policy.bytesBudget },
        }),
      ),
    );
    for (const g of issued) {
      tokens.push(g.token);
      grantIds.push(g.grantId);
    }
    done += chunk;
  }
  return { ledger, tokens, grantIds };
}

/** One admitted call through the whole path: admission, the no-op tool, settlement. */
export async function oursCall(ledger: Ledger, token: string, i: number): Promise<void> {
  const outcome = await ledger.invoke(token, policy.tool, request(i));
  if (outcome.status !== 'completed') throw new Error(`bench call ${i} was ${outcome.status}`);
}
