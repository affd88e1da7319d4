import type { CliIo } from '../io';
import { configBytesMax, GatewayConfigError, parseGatewayConfig, parseUpstreams } from '../../integrations/gateway/config';
import { gatewayPolicyProblems, type ProblemLevel } from '../../policy/gatewayPolicyProblems';
import { fieldPointer } from '../../policy/pointer';
import type { PolicyTool } from '../../policy/checkPolicy';
import { gatewayTools } from '../gatewayTools';
import { readBoundedText } from '../policyTools';
import { printable } from '../../text/printable';

/** A problem of the config: in one of its policies (`policy`), or in the config itself. */
interface ConfigProblem {
  readonly pointer: string;
  readonly code: string;
  readonly level: ProblemLevel;
  readonly message: string;
  readonly policy?: string;
}

type Obj = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `atc policy check --gateway <config>`: every policy of a gateway config against the tools its
 * upstreams list under the gateway's names (what `atc gateway` checks at start, where an error
 * refuses the start), plus whatever else in the config would stop the gateway. Pointers are into
 * the config file. Exit 0 clean, 1 problems (errors or warnings), 2 unreadable config or upstream.
 */
export async function runPolicyCheckGateway(file: string, json: boolean, io: CliIo, now: number): Promise<number> {
  let text: string;
  try {
    text = readBoundedText(file, configBytesMax);
  } catch (error) {
    io.err(`atc policy check: ${(error as Error).message}`);
    return 2;
  }
  let root: unknown;
  try {
    root = JSON.parse(text) as unknown;
  } catch {
    return report(file, [{ pointer: '', code: 'malformed', level: 'error', message: 'the gateway config is not JSON' }], undefined, json, io);
  }
  const config: Obj = isObject(root) ? root : {};
  const policies = isObject(config.policies) ? Object.entries(config.policies) : [];
  let tools: PolicyTool[] | undefined;
  const problems: ConfigProblem[] = [];
  try {
    const upstreams = parseUpstreams(config.upstreams);
    const found = await gatewayTools(upstreams, config.toolNames === 'plain' ? 'plain' : 'prefixed');
    tools = [...found.tools];
    for (const [name, why] of found.refused) io.err(printable(`atc policy check: the gateway would refuse tool ${name}: ${why}`));
    if (found.shared !== undefined) problems.push({ pointer: '/toolNames', code: 'malformed', level: 'error', message: `"plain": two upstreams list a tool named ${JSON.stringify(found.shared)}; use "prefixed"` });
  } catch (error) {
    // A malformed `upstreams` is reported below with the rest of the config; an upstream that fails is not a policy problem.
    if (!(error instanceof GatewayConfigError)) {
      io.err(`atc policy check: ${(error as Error).message}`);
      return 2;
    }
  }
  const policyProblems = gatewayPolicyProblems(policies, tools, now);
  const configProblem = parseProblem(text, file, policyProblems.some((p) => p.code === 'malformed'));
  return report(file, [...(configProblem !== undefined ? [configProblem] : []), ...problems, ...policyProblems], tools, json, io);
}

/**
 * The first thing the gateway's own parser refuses, unless it is a policy the lint already
 * reported as malformed (with a pointer of its own).
 */
function parseProblem(text: string, file: string, policyMalformed: boolean): ConfigProblem | undefined {
  try {
    parseGatewayConfig(text, file);
    return undefined;
  } catch (error) {
    if (!(error instanceof GatewayConfigError)) throw error;
    if (policyMalformed && error.field.startsWith('policies.')) return undefined;
    return { pointer: fieldPointer(error.field), code: 'malformed', level: 'error', message: error.message };
  }
}

async function report(file: string, problems: readonly ConfigProblem[], tools: readonly PolicyTool[] | undefined, json: boolean, io: CliIo): Promise<number> {
  if (json) {
    await io.out(JSON.stringify({ ok: problems.length === 0, tools: 'gateway', problems }));
  } else {
    for (const p of problems) await io.out(printable(`${file}#${p.pointer} ${p.level} ${p.code}: ${p.message}`));
    const against = tools === undefined ? 'no tool list' : `${tools.length} tools from the gateway's upstreams`;
    const errors = problems.filter((p) => p.level === 'error').length;
    await io.out(problems.length === 0 ? `ok: no problems (checked against ${against})` : `${problems.length} problem(s), ${errors} error(s): atc gateway ${errors > 0 ? 'refuses to start' : 'starts'} (checked against ${against})`);
  }
  if (tools === undefined) io.err('atc policy check: the config names no usable upstreams: unknown tools, undeclared properties and arguments were not checked');
  return problems.length === 0 ? 0 : 1;
}
