import { createLedger, type IssueOptions, type LedgerEvent } from '../../src';
import type { CaseRecord } from '../../src/evidence/types';
import { NotesStore } from './notesStore';
import { registerNotesTools } from './notesTools';
import { observedOf } from './outcome';
import { seedNotes, sequentialCases, type CaseDefinition, type GrantLabel } from '../../src/evidence/sequentialCases';

const hourMs = 3_600_000;

/** A token that has the issued tokens' form but was never issued by any ledger. */
const forgedToken = `atc_${'F'.repeat(43)}`;

export interface SequentialRun {
  readonly cases: readonly CaseRecord[];
  readonly log: readonly LedgerEvent[];
}

/**
 * Runs the 31 cases one after another on a fresh ledger with a hand-moved clock, recording the
 * store's digest and the tool runs around each call.
 */
export async function runSequential(startAt: number, definitions: readonly CaseDefinition[] = sequentialCases): Promise<SequentialRun> {
  let now = startAt;
  const ledger = createLedger({ clock: () => now, idempotencyKeysPerTreeMax: 1 });
  const store = new NotesStore(seedNotes);
  await registerNotesTools(ledger, store);

  const drafts = ['notes:/drafts/'];
  const readOnly = { tools: ['notes.read'], resources: drafts, budget: { calls: 10, inputBytes: 4_096 } };
  const grants: Record<Exclude<GrantLabel, 'forged'>, IssueOptions> = {
    main: {
      tools: ['notes.list', 'notes.read', 'notes.write'],
      args: { 'notes.write': { properties: { text: { maxLength: 64 } } } },
      resources: drafts,
      expiresAt: startAt + hourMs,
      budget: { calls: 3, inputBytes: 4_096 },
    },
    revoked: { ...readOnly, expiresAt: startAt + hourMs },
    future: { ...readOnly, notBefore: startAt + hourMs, expiresAt: startAt + 2 * hourMs },
    expiring: { ...readOnly, expiresAt: startAt + 1_000 },
    bytes: { tools: ['notes.write'], resources: drafts, expiresAt: startAt + hourMs, budget: { calls: 10, inputBytes: 16 } },
    metered: { tools: ['notes.write'], resources: drafts, expiresAt: startAt + hourMs, budget: { calls: 10, inputBytes: 4_096, meters: { chars: 4 } } },
    rated: { ...readOnly, expiresAt: startAt + 2 * hourMs, budget: { calls: 10, inputBytes: 4_096, rate: { calls: 1, windowMs: hourMs } } },
    keyed: { tools: ['notes.write'], resources: drafts, expiresAt: startAt + 2 * hourMs, budget: { calls: 10, inputBytes: 4_096 } },
  };
  const tokens = new Map<GrantLabel, string>([['forged', forgedToken]]);
  for (const [label, options] of Object.entries(grants) as [Exclude<GrantLabel, 'forged'>, IssueOptions][]) {
    const { grantId, token } = await ledger.issue(options);
    tokens.set(label, token);
    if (label === 'revoked') await ledger.revoke(grantId);
  }

  const cases: CaseRecord[] = [];
  for (const definition of definitions) {
    if (definition.advanceClockMs !== undefined) now += definition.advanceClockMs;
    const token = tokens.get(definition.grant) as string;
    const digestBefore = store.digest();
    const runsBefore = store.runs.length;
    const outcome = definition.idempotencyKey === undefined ? await ledger.invoke(token, definition.tool, definition.args) : await ledger.invoke(token, definition.tool, definition.args, { idempotencyKey: definition.idempotencyKey });
    cases.push({
      name: definition.name,
      description: definition.description,
      kind: definition.kind,
      tool: definition.tool,
      expected: definition.expected,
      observed: observedOf(outcome),
      storeDigestBefore: digestBefore,
      storeDigestAfter: store.digest(),
      toolRuns: store.runs.length - runsBefore,
    });
  }
  const log = ledger.events();
  await ledger.close();
  return { cases, log };
}
