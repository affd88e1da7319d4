import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { closeObjectSchemas } from '../../src/tools/schemas';
import { argumentsOf, type SuiteData } from './data';
import type { SuiteRun } from './runSuite';

/** A call the ledger refused as invalid_arguments although the AgentDojo schema, as written, accepts it. */
export interface SchemaFinding {
  readonly suite: SuiteData['name'];
  readonly policy: SuiteRun['policy'];
  readonly tool: string;
  readonly userTask: string;
  readonly injectionTask: string | null;
  readonly callIndex: number;
  /** Whether the schema as the ledger compiles it (object schemas closed) still accepts the call. */
  readonly closedSchemaAccepts: boolean;
}

/**
 * Re-checks every `invalid_arguments` rejection against the tool's raw schema with a plain ajv (no
 * closing of object schemas). A call the raw schema accepts points at the ledger's schema handling,
 * not at the call. Only the rejection and the tool are reported, never argument values.
 */
export function schemaFindings(suite: SuiteData, run: SuiteRun): SchemaFinding[] {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  const raw = new Map(suite.tools.map((t) => [t.name, t.parameters]));
  const tasks = new Map([...suite.userTasks.map((t) => [`u:${t.id}`, t.calls] as const), ...suite.injectionTasks.map((t) => [`i:${t.id}`, t.calls] as const)]);
  const findings: SchemaFinding[] = [];
  for (const grant of run.grants) {
    const calls = tasks.get(grant.injectionTask === null ? `u:${grant.userTask}` : `i:${grant.injectionTask}`) ?? [];
    grant.calls.forEach((ref, callIndex) => {
      if (run.observed[ref.callId]?.reason !== 'invalid_arguments') return;
      const schema = raw.get(ref.tool);
      const call = calls[callIndex];
      if (schema === undefined || call === undefined) return;
      if (ajv.validate(schema, argumentsOf(call).args) !== true) return;
      findings.push({
        suite: suite.name,
        policy: run.policy,
        tool: ref.tool,
        userTask: grant.userTask,
        injectionTask: grant.injectionTask,
        callIndex,
        closedSchemaAccepts: ajv.validate(closeObjectSchemas(schema) as object, argumentsOf(call).args) === true,
      });
    });
  }
  return findings;
}
