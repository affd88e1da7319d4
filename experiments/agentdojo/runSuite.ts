import { createLedger, type Ledger, type LedgerEvent, type RejectReason } from '../../src';
import { argumentsOf, type GroundTruthCall, type SuiteData } from './data';
import { clockStartMs, factScopes, grantFor, type FactScopes, type PolicyName } from './policies';
import { suiteResourceRules } from './suiteResources';

/** One replayed call: which tool, and the call id the ledger logged its decision under. */
export interface CallRef {
  readonly tool: string;
  readonly callId: string;
}

/** One grant and the calls replayed under it: the task's own calls, or one injection's calls. */
export interface GrantRun {
  /** Null when the grant could not be issued (its calls then carry no token: `unknown_token`). */
  readonly grantId: string | null;
  readonly userTask: string;
  /** Null for the benign (utility) run of the user task. */
  readonly injectionTask: string | null;
  readonly calls: readonly CallRef[];
}

export interface RegistrationProblem {
  readonly tool: string;
  readonly message: string;
}

/** What `invoke` answered, kept to cross-check the log. */
export interface ObservedCall {
  readonly outcome: 'admitted' | 'rejected';
  readonly reason?: RejectReason;
}

export interface SuiteRun {
  readonly suite: SuiteData['name'];
  readonly policy: PolicyName;
  readonly registered: readonly string[];
  readonly registrationProblems: readonly RegistrationProblem[];
  readonly grants: readonly GrantRun[];
  /** Injection tasks with no ground-truth calls: no pair can be measured for them. */
  readonly injectionTasksWithoutCalls: readonly string[];
  readonly observed: Readonly<Record<string, ObservedCall>>;
  /** Call ids whose tool actually ran (the no-op recorder), in order. */
  readonly toolRuns: readonly string[];
  readonly log: readonly LedgerEvent[];
}

async function registerSuiteTools(ledger: Ledger, suite: SuiteData, toolRuns: string[]): Promise<{ registered: string[]; problems: RegistrationProblem[] }> {
  const registered: string[] = [];
  const problems: RegistrationProblem[] = [];
  const rules = suiteResourceRules[suite.name];
  for (const spec of suite.tools) {
    const rule = rules[spec.name];
    try {
      await ledger.registerTool({
        name: spec.name,
        inputSchema: spec.parameters,
        ...(rule !== undefined ? { resources: rule.resources } : {}),
        run: (_args, ctx) => {
          toolRuns.push(ctx.callId);
          return null;
        },
      });
      registered.push(spec.name);
    } catch (error) {
      // A schema the ledger refuses is a finding to report, not a reason to stop the run.
      problems.push({ tool: spec.name, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return { registered, problems };
}

async function replay(ledger: Ledger, token: string, calls: readonly GroundTruthCall[], observed: Record<string, ObservedCall>): Promise<CallRef[]> {
  const refs: CallRef[] = [];
  for (const call of calls) {
    const outcome = await ledger.invoke(token, call.function, argumentsOf(call).args);
    observed[outcome.callId] = outcome.status === 'rejected' ? { outcome: 'rejected', reason: outcome.reason } : { outcome: 'admitted' };
    refs.push({ tool: call.function, callId: outcome.callId });
  }
  return refs;
}

/**
 * Runs one suite under one policy on a fresh in-memory ledger: the benign run of every user task,
 * then every (user task, injection task) pair, each pair on a fresh grant with the user task's scope
 * and its whole budget (the most the injected agent could have). Tools are no-op recorders.
 */
export async function runSuite(suite: SuiteData, policy: PolicyName, facts: FactScopes = factScopes(suite.name, suite.facts)): Promise<SuiteRun> {
  const ledger = createLedger({ clock: () => clockStartMs });
  const toolRuns: string[] = [];
  const observed: Record<string, ObservedCall> = {};
  const grants: GrantRun[] = [];
  const { registered, problems } = await registerSuiteTools(ledger, suite, toolRuns);
  const registeredSet = new Set(registered);

  const issue = async (task: SuiteData['userTasks'][number]): Promise<{ grantId: string | null; token: string }> => {
    try {
      return await ledger.issue(grantFor(suite, task, policy, registeredSet, facts));
    } catch {
      return { grantId: null, token: '' };
    }
  };

  for (const task of suite.userTasks) {
    const { grantId, token } = await issue(task);
    grants.push({ grantId, userTask: task.id, injectionTask: null, calls: await replay(ledger, token, task.calls, observed) });
  }
  const measurable = suite.injectionTasks.filter((t) => t.calls.length > 0);
  for (const injection of measurable) {
    for (const task of suite.userTasks) {
      const { grantId, token } = await issue(task);
      grants.push({ grantId, userTask: task.id, injectionTask: injection.id, calls: await replay(ledger, token, injection.calls, observed) });
    }
  }
  const log = ledger.events();
  await ledger.close();
  return {
    suite: suite.name,
    policy,
    registered,
    registrationProblems: problems,
    grants,
    injectionTasksWithoutCalls: suite.injectionTasks.filter((t) => t.calls.length === 0).map((t) => t.id),
    observed,
    toolRuns,
    log,
  };
}
