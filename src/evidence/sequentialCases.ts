import type { Expected } from './types';

/** Which grant a case presents; `forged` is a well-formed token that was never issued. */
export type GrantLabel = 'main' | 'revoked' | 'future' | 'expiring' | 'bytes' | 'metered' | 'rated' | 'keyed' | 'forged';

export interface CaseDefinition {
  readonly name: string;
  /** Says what the case tries, in words: never the argument values themselves. */
  readonly description: string;
  readonly kind: 'allowed' | 'adversarial';
  readonly grant: GrantLabel;
  readonly tool: string;
  readonly args: unknown;
  readonly expected: Expected;
  /** Moves the run's clock forward before the call (used to pass a grant's expiry). */
  readonly advanceClockMs?: number;
  /** Calls with this idempotency key (it carries the marker too: the log must hold only its digest). */
  readonly idempotencyKey?: string;
}

/**
 * Every string argument value carries this marker, so a test can prove no argument value reaches the
 * evidence by scanning for it.
 */
export const argumentMarker = 'argv';

/** The notes present before the first case. */
export const seedNotes: { readonly [path: string]: string } = {
  'drafts/argv-seed': 'argv-seed-text',
  'drafts/argv-dir/one': 'argv-dir-text',
  'argv-vault/key': 'argv-vault-secret',
};

/**
 * The seed's experiment had 25 sequential cases (3 allowed, 22 adversarial); they come first in the
 * table below, in order, and the cases added since (meters, rate windows, idempotency keys) follow.
 */
export const seedCaseCount = 25;

/** Whether the case of this name is one of the seed's 25. */
export function isSeedCase(name: string): boolean {
  return sequentialCases.slice(0, seedCaseCount).some((c) => c.name === name);
}

const admitted: Expected = { outcome: 'admitted' };
const rejected = (reason: NonNullable<Expected['reason']>): Expected => ({ outcome: 'rejected', reason });

/**
 * The main grant's call budget is 3: the three controls on it use it up, so `call-budget-exhausted`
 * finds it exhausted. The `rated` grant admits one call per hour: its control fills the window, so
 * `rate-limited` finds it full. The `keyed` grant's tree may hold one idempotency key (the run's
 * `idempotencyKeysPerTreeMax`): its control binds it, so the same key with other arguments conflicts
 * and a second key finds the tree full.
 */
export const sequentialCases: readonly CaseDefinition[] = [
  { name: 'allowed-write', description: 'write a note inside the granted drafts scope', kind: 'allowed', grant: 'main', tool: 'notes.write', args: { path: 'drafts/argv-plan', text: 'argv-control-text' }, expected: admitted },
  { name: 'allowed-read', description: 'read a seeded note inside the granted scope', kind: 'allowed', grant: 'main', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: admitted },
  { name: 'allowed-list', description: 'list a directory inside the granted scope', kind: 'allowed', grant: 'main', tool: 'notes.list', args: { dir: 'drafts/argv-dir' }, expected: admitted },

  { name: 'unknown-token', description: 'a well-formed bearer token that was never issued', kind: 'adversarial', grant: 'forged', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('unknown_token') },
  { name: 'revoked-grant', description: 'a token whose grant the host revoked', kind: 'adversarial', grant: 'revoked', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('revoked') },
  { name: 'not-yet-valid', description: 'a grant used before its notBefore', kind: 'adversarial', grant: 'future', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('not_yet_valid') },
  { name: 'expired', description: 'a grant used at its expiresAt (the clock is moved past it)', kind: 'adversarial', grant: 'expiring', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('expired'), advanceClockMs: 1_000 },
  { name: 'unknown-tool', description: 'a tool name no host registered', kind: 'adversarial', grant: 'main', tool: 'notes.rename', args: { path: 'drafts/argv-seed', to: 'drafts/argv-renamed' }, expected: rejected('unknown_tool') },
  { name: 'tool-not-granted', description: 'a registered tool (notes.delete) the grant does not list', kind: 'adversarial', grant: 'main', tool: 'notes.delete', args: { path: 'drafts/argv-seed' }, expected: rejected('tool_not_granted') },
  { name: 'undeclared-argument', description: 'an extra property the tool schema does not declare', kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/argv-plan', text: 'argv-t', mode: 'argv-append' }, expected: rejected('invalid_arguments') },
  { name: 'wrong-type', description: 'a number where the tool schema requires a string', kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/argv-plan', text: 42 }, expected: rejected('invalid_arguments') },
  { name: 'narrowing-violated', description: "text longer than the grant's narrowing schema allows (maxLength 64)", kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/argv-plan', text: `argv-${'x'.repeat(80)}` }, expected: rejected('argument_not_permitted') },
  { name: 'path-dot-dot', description: "a '..' segment climbing out of the scope", kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/../argv-vault/key', text: 'argv-t' }, expected: rejected('invalid_resource') },
  { name: 'path-dot-segment', description: "a '.' segment that names an in-scope note another way", kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts/./argv-seed' }, expected: rejected('invalid_resource') },
  { name: 'path-percent-encoded', description: "percent-encoded '..' segments", kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts/%2e%2e/argv-vault/key' }, expected: rejected('invalid_resource') },
  { name: 'path-double-encoded', description: "double percent-encoded '..' segments", kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts/%252e%252e/argv-vault/key' }, expected: rejected('invalid_resource') },
  { name: 'path-backslash', description: "backslash separators with '..' segments", kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts\\..\\argv-vault\\key', text: 'argv-t' }, expected: rejected('invalid_resource') },
  { name: 'path-full-width', description: "full-width dots and slashes (U+FF0E, U+FF0F) that NFKC folds into '../'", kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/\uff0e\uff0e\uff0fargv-vault\uff0fkey', text: 'argv-t' }, expected: rejected('invalid_resource') },
  { name: 'path-nul-byte', description: 'a NUL byte inside a segment', kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts/argv-seed\u0000.txt' }, expected: rejected('invalid_resource') },
  { name: 'path-absolute', description: 'an absolute path (leading slash gives an empty segment)', kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: '/argv-vault/key' }, expected: rejected('invalid_resource') },
  { name: 'path-not-nfc', description: 'a decomposed (non-NFC) accented character', kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'drafts/argv-cafe\u0301', text: 'argv-t' }, expected: rejected('invalid_resource') },
  { name: 'scope-sibling', description: "a sibling directory sharing the scope's name as a prefix (drafts-x)", kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts-x/argv-seed' }, expected: rejected('resource_not_permitted') },
  { name: 'scope-outside', description: 'a canonical path outside every scope of the grant', kind: 'adversarial', grant: 'main', tool: 'notes.write', args: { path: 'argv-vault/key', text: 'argv-t' }, expected: rejected('resource_not_permitted') },
  { name: 'call-budget-exhausted', description: 'a valid call after the three controls used the call budget of 3', kind: 'adversarial', grant: 'main', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('call_budget_exhausted') },
  { name: 'byte-budget-exhausted', description: 'a valid call larger than the input-byte budget of 16', kind: 'adversarial', grant: 'bytes', tool: 'notes.write', args: { path: 'drafts/argv-b', text: 'argv-bytes' }, expected: rejected('byte_budget_exhausted') },
  { name: 'meter-budget-exhausted', description: "a write whose cost (its text's characters) exceeds the grant's chars meter of 4", kind: 'adversarial', grant: 'metered', tool: 'notes.write', args: { path: 'drafts/argv-m', text: 'argv-meter' }, expected: rejected('meter_budget_exhausted') },
  { name: 'allowed-rated-read', description: 'read a seeded note on a grant whose rate window admits one call per hour', kind: 'allowed', grant: 'rated', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: admitted },
  { name: 'rate-limited', description: "a second read inside the rated grant's one-call-per-hour window", kind: 'adversarial', grant: 'rated', tool: 'notes.read', args: { path: 'drafts/argv-seed' }, expected: rejected('rate_limited') },
  { name: 'allowed-keyed-write', description: 'write a note with an idempotency key (binds the key)', kind: 'allowed', grant: 'keyed', tool: 'notes.write', args: { path: 'drafts/argv-k', text: 'argv-keyed' }, expected: admitted, idempotencyKey: 'argv-key-1' },
  { name: 'idempotency-conflict', description: 'the same idempotency key with other arguments', kind: 'adversarial', grant: 'keyed', tool: 'notes.write', args: { path: 'drafts/argv-k', text: 'argv-other' }, expected: rejected('idempotency_conflict'), idempotencyKey: 'argv-key-1' },
  { name: 'idempotency-keys-exhausted', description: "a second idempotency key while the grant's tree holds as many live keys as it may", kind: 'adversarial', grant: 'keyed', tool: 'notes.write', args: { path: 'drafts/argv-k2', text: 'argv-second' }, expected: rejected('idempotency_keys_exhausted'), idempotencyKey: 'argv-key-2' },
];
