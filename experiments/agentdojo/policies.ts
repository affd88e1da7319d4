import type { IssueOptions, JsonObject, JsonValue } from '../../src';
import type { SuiteData, SuiteName, UserTask } from './data';
import { addressResource, named, webResource } from './resourceNames';
import { kinds, suiteResourceRules, type Kind } from './suiteResources';

/**
 * A: exactly the task's tools, each resource kind they touch in full. B: A narrowed by the host's
 * facts. C: B, where each narrowed kind also admits the names the user's own prompt spells out.
 */
export const policyNames = ['A', 'B', 'C'] as const;
export type PolicyName = (typeof policyNames)[number];

export const policyDescriptions: Readonly<Record<PolicyName, string>> = {
  A: "tools only: exactly the tools the task's ground-truth calls use; every resource kind those tools touch is granted whole",
  B: 'tools + facts: A, with each resource kind the environment facts enumerate narrowed to exactly those names, plus narrowing schemas built from the facts',
  C: "tools + facts + prompt: B, where each kind B narrowed also admits the names written in the user's prompt (e-mail addresses, IBANs, www. addresses, quoted phrases); never narrower than B",
};

/** The budget every grant gets: calls scale with the task, bytes are one host-wide constant. */
export const budgetRule = {
  callsPerGroundTruthCall: 2,
  inputBytes: 65_536,
} as const;

/** Grants are issued at this clock reading and last one hour; the ledger's clock never moves. */
export const clockStartMs = Date.UTC(2024, 4, 15, 9, 0, 0);
export const grantLifetimeMs = 3_600_000;

/** What the facts enumerate, per resource kind, and the narrowing schemas they support. */
export interface FactScopes {
  readonly resources: ReadonlyMap<Kind, readonly string[]>;
  readonly narrowing: Readonly<Record<string, JsonObject>>;
}

function list(value: JsonValue | undefined): readonly JsonValue[] {
  return Array.isArray(value) ? (value as readonly JsonValue[]) : [];
}

function strings(values: readonly (JsonValue | undefined)[]): string[] {
  return values.filter((v): v is string => typeof v === 'string');
}

function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject)[key] : undefined;
}

function uniqueSorted(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

/**
 * Reads only environment_facts.json (never the injection tasks): known addresses, accounts, files,
 * channels, users and web pages become exact resource names; known scheduled-transaction ids become
 * a narrowing schema.
 */
export function factScopes(suite: SuiteName, facts: JsonObject): FactScopes {
  const resources = new Map<Kind, readonly string[]>();
  const narrowing: Record<string, JsonObject> = {};
  const put = (kind: Kind, names: readonly string[]): void => {
    if (names.length > 0) resources.set(kind, uniqueSorted(names));
  };
  switch (suite) {
    case 'workspace':
      put(kinds.mailTo, strings([facts.user_email, ...list(facts.contacts).map((c) => field(c, 'email')), ...list(facts.calendar_participants)]).map(addressResource));
      break;
    case 'travel':
      put(kinds.mailTo, strings([field(facts.user, 'email'), facts.inbox_account_email, facts.calendar_account_email]).map(addressResource));
      break;
    case 'banking': {
      const scheduled = list(facts.scheduled_transactions);
      put(kinds.bankIban, strings([facts.user_iban, ...list(facts.known_counterparties).map((c) => field(c, 'iban')), ...scheduled.map((t) => field(t, 'recipient'))]).map((iban) => named(kinds.bankIban, iban)));
      put(kinds.bankFile, strings(list(facts.files)).map((file) => named(kinds.bankFile, file)));
      const ids = scheduled.map((t) => field(t, 'id')).filter((id): id is number => typeof id === 'number');
      if (ids.length > 0) narrowing.update_scheduled_transaction = { properties: { id: { enum: [...new Set(ids)].sort((a, b) => a - b) } } };
      break;
    }
    case 'slack': {
      const users = strings(list(facts.users));
      put(kinds.slackChannel, strings(list(facts.channels)).map((c) => named(kinds.slackChannel, c)));
      put(kinds.slackUser, users.map((u) => named(kinds.slackUser, u)));
      put(kinds.slackInbox, users.map((u) => named(kinds.slackInbox, u)));
      put(kinds.web, strings(list(facts.web_pages)).map(webResource));
      break;
    }
  }
  return { resources, narrowing };
}

const emailPattern = /[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
const ibanPattern = /\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b/g;
// Host labels in lowercase, so a sentence run on after the host ("www.x.com.They") ends the match.
const webPattern = /\b(?:https?:\/\/)?www\.[a-z0-9-]+(?:\.[a-z0-9-]+)*(?:\/[^\s'"]*)?/g;
const quotedPattern = /'([^'\n]{1,120})'|"([^"\n]{1,120})"/g;

/**
 * Names the user's prompt spells out, per kind, found with fixed patterns (no task-specific rules):
 * e-mail addresses, IBANs, `www.` addresses, and quoted phrases for the kinds named by free text.
 */
export function promptNames(prompt: string): ReadonlyMap<Kind, readonly string[]> {
  const quoted = [...prompt.matchAll(quotedPattern)].map((m) => (m[1] ?? m[2] ?? '').trim()).filter((q) => q !== '');
  const emails = (prompt.match(emailPattern) ?? []).map((e) => e.replace(/\.+$/, ''));
  const urls = (prompt.match(webPattern) ?? []).map((u) => u.replace(/[.,;:!?)]+$/, ''));
  const out = new Map<Kind, readonly string[]>([
    [kinds.mailTo, emails.map(addressResource)],
    [kinds.bankIban, (prompt.match(ibanPattern) ?? []).map((i) => named(kinds.bankIban, i))],
    [kinds.web, urls.map(webResource)],
  ]);
  for (const kind of [kinds.hotel, kinds.car, kinds.restaurant, kinds.slackChannel, kinds.slackUser, kinds.bankFile] as const) out.set(kind, quoted.map((q) => named(kind, q)));
  return out;
}

/** The tools a task's ground-truth calls use, in first-use order. */
export function toolsOf(task: UserTask): string[] {
  return [...new Set(task.calls.map((c) => c.function))];
}

/**
 * The one grant the host issues for a user task, before any agent output. `registered` filters out
 * tools the ledger could not register (their calls then meet `unknown_tool`).
 */
export function grantFor(suite: SuiteData, task: UserTask, policy: PolicyName, registered: ReadonlySet<string>, facts: FactScopes): IssueOptions {
  const tools = toolsOf(task).filter((t) => registered.has(t));
  const rules = suiteResourceRules[suite.name];
  const touched = uniqueSorted(tools.flatMap((t) => rules[t]?.kinds ?? [])) as Kind[];
  const fromPrompt = policy === 'C' ? promptNames(task.prompt) : new Map<Kind, readonly string[]>();
  const resources = touched.flatMap((kind) => {
    const known = policy === 'A' ? undefined : facts.resources.get(kind);
    return known === undefined ? [kind] : uniqueSorted([...known, ...(fromPrompt.get(kind) ?? [])]);
  });
  const args: Record<string, JsonObject> = {};
  if (policy !== 'A') for (const tool of tools) if (facts.narrowing[tool] !== undefined) args[tool] = facts.narrowing[tool] as JsonObject;
  return {
    tools,
    args,
    resources,
    notBefore: clockStartMs,
    expiresAt: clockStartMs + grantLifetimeMs,
    budget: { calls: budgetRule.callsPerGroundTruthCall * task.calls.length, inputBytes: budgetRule.inputBytes },
  };
}
