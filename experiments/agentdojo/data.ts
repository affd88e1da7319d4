import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { JsonObject, JsonValue } from '../../src';
import { packageRoot } from '../reproduce/environment';

/** The four AgentDojo suites, in the order they are reported. */
export const suiteNames = ['workspace', 'travel', 'banking', 'slack'] as const;
export type SuiteName = (typeof suiteNames)[number];

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** The AgentDojo JSON Schema for the tool's arguments, registered as the ledger's inputSchema. */
  readonly parameters: JsonObject;
}

/** One ground-truth call. `placeholder_args` is the templated form (`$content`…) of injection calls. */
export interface GroundTruthCall {
  readonly function: string;
  readonly args: JsonObject | null;
  readonly placeholder_args: JsonObject | null;
}

export interface UserTask {
  readonly id: string;
  readonly prompt: string;
  readonly calls: readonly GroundTruthCall[];
}

export interface InjectionTask {
  readonly id: string;
  readonly goal: string;
  readonly calls: readonly GroundTruthCall[];
}

export interface SuiteData {
  readonly name: SuiteName;
  readonly tools: readonly ToolSpec[];
  readonly userTasks: readonly UserTask[];
  readonly injectionTasks: readonly InjectionTask[];
  /** environment_facts.json for this suite: what the host knows when it issues a grant. */
  readonly facts: JsonObject;
}

export interface Dataset {
  readonly agentdojoVersion: string;
  readonly benchmarkVersion: string;
  /** SHA-256 of each data file's bytes, keyed by file name. */
  readonly fileHashes: Readonly<Record<string, string>>;
  readonly suites: readonly SuiteData[];
}

export const dataFiles = ['tools.json', 'tasks.json', 'environment_facts.json'] as const;

/** The copy of the AgentDojo data kept in the repository (see data/NOTICE.md); same path from src or dist. */
export function defaultDataDir(): string {
  return path.join(packageRoot(), 'experiments', 'agentdojo', 'data');
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function need<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new Error(`agentdojo data: ${what}`);
  return value;
}

function callsOf(value: JsonValue | undefined, where: string): GroundTruthCall[] {
  need(Array.isArray(value), value, `${where}.calls must be an array`);
  return (value as JsonValue[]).map((call, i) => {
    const at = `${where}.calls[${i}]`;
    need(isObject(call), call, `${at} must be an object`);
    const c = call as JsonObject;
    need(typeof c.function === 'string', c, `${at}.function must be a string`);
    need(c.args === null || isObject(c.args), c, `${at}.args must be an object or null`);
    need(c.placeholder_args === null || c.placeholder_args === undefined || isObject(c.placeholder_args), c, `${at}.placeholder_args must be an object or null`);
    return { function: c.function as string, args: (c.args ?? null) as JsonObject | null, placeholder_args: (c.placeholder_args ?? null) as JsonObject | null };
  });
}

function tasksOf(value: JsonValue | undefined, where: string, text: 'prompt' | 'goal'): { id: string; text: string; calls: GroundTruthCall[] }[] {
  need(isObject(value), value, `${where} must be an object of tasks`);
  return Object.entries(value as JsonObject).map(([id, task]) => {
    need(isObject(task), task, `${where}.${id} must be an object`);
    const t = task as JsonObject;
    const words = t[text] ?? t.prompt;
    return { id, text: typeof words === 'string' ? words : '', calls: callsOf(t.calls, `${where}.${id}`) };
  });
}

/** Tasks are listed in numeric order of their ids (the file lists some out of order). */
function byTaskNumber(a: { id: string }, b: { id: string }): number {
  const n = (id: string): number => Number(/(\d+)$/.exec(id)?.[1] ?? Number.NaN);
  return n(a.id) - n(b.id) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Reads and shape-checks the three data files; throws a message naming the first malformed part. */
export function loadDataset(dir: string = defaultDataDir()): Dataset {
  const texts: Record<string, string> = {};
  const fileHashes: Record<string, string> = {};
  for (const file of dataFiles) {
    const bytes = readFileSync(path.join(dir, file));
    fileHashes[file] = createHash('sha256').update(bytes).digest('hex');
    texts[file] = bytes.toString('utf8');
  }
  const tools = JSON.parse(texts['tools.json'] as string) as JsonObject;
  const tasks = JSON.parse(texts['tasks.json'] as string) as JsonObject;
  const facts = JSON.parse(texts['environment_facts.json'] as string) as JsonObject;
  need(isObject(tools.suites), tools, 'tools.json needs suites');
  const suites = suiteNames.map((name): SuiteData => {
    const toolList = (tools.suites as JsonObject)[name];
    need(Array.isArray(toolList), toolList, `tools.json suites.${name} must be an array`);
    const specs = (toolList as JsonValue[]).map((t, i): ToolSpec => {
      need(isObject(t) && typeof t.name === 'string', t, `tools.json suites.${name}[${i}] needs a name`);
      const spec = t as JsonObject;
      // A missing or non-object schema is kept as is: registration reports it (see registerSuiteTools).
      return { name: spec.name as string, description: String(spec.description ?? ''), parameters: spec.parameters as JsonObject };
    });
    const suiteTasks = tasks[name];
    need(isObject(suiteTasks), suiteTasks, `tasks.json ${name} must be an object`);
    const st = suiteTasks as JsonObject;
    const userTasks = tasksOf(st.user, `tasks.json ${name}.user`, 'prompt').sort(byTaskNumber).map((t) => ({ id: t.id, prompt: t.text, calls: t.calls }));
    const injectionTasks = tasksOf(st.injection, `tasks.json ${name}.injection`, 'goal').sort(byTaskNumber).map((t) => ({ id: t.id, goal: t.text, calls: t.calls }));
    const suiteFacts = facts[name];
    need(isObject(suiteFacts), suiteFacts, `environment_facts.json ${name} must be an object`);
    return { name, tools: specs, userTasks, injectionTasks, facts: suiteFacts as JsonObject };
  });
  return {
    agentdojoVersion: String(tools.agentdojo_version ?? 'unknown'),
    benchmarkVersion: String(tools.benchmark_version ?? 'unknown'),
    fileHashes,
    suites,
  };
}

/**
 * The arguments a call is replayed with. The data gives concrete `args` for every call; the templated
 * `placeholder_args` (`"$amount"` where a number is expected…) are used only when `args` is null,
 * since replaying a template would be rejected as invalid_arguments and count as a spurious block.
 */
export function argumentsOf(call: GroundTruthCall): { readonly args: JsonObject; readonly source: 'args' | 'placeholder_args' | 'none' } {
  if (call.args !== null) return { args: call.args, source: 'args' };
  if (call.placeholder_args !== null) return { args: call.placeholder_args, source: 'placeholder_args' };
  return { args: {}, source: 'none' };
}
