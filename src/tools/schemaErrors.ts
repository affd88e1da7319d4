import type { ErrorObject } from 'ajv';
import type { JsonValue } from '../domain/json';
import { subSchemas } from './schemaWalk';

// Turns ajv's first error into what an agent can act on: where (`/text`) and which keyword failed
// (`maxLength 200`), from the schema's own words only. Never an argument value, and never a key the
// schema does not name: ajv's params that carry the agent's keys (`additionalProperty`,
// `propertyName`, `unevaluatedProperty`) are dropped, and a location segment that is neither an
// array index nor a property name the schema declares is written `*`.

const messageCharsMax = 240;

/** The property names a schema declares anywhere (`properties`, `required`, dependencies): safe to echo. */
export function declaredNames(schema: JsonValue): ReadonlySet<string> {
  const names = new Set<string>();
  const stack: JsonValue[] = [schema];
  let budget = 100_000; // the schema is already bounded; this keeps the walk total whatever it holds
  while (stack.length > 0 && budget-- > 0) {
    const popped = stack.pop() as JsonValue;
    if (popped === null || typeof popped !== 'object' || Array.isArray(popped)) continue;
    const node = popped as { readonly [key: string]: JsonValue };
    for (const key of ['properties', 'dependentRequired', 'dependentSchemas', 'dependencies'] as const) {
      const map = node[key];
      if (map !== null && typeof map === 'object' && !Array.isArray(map)) for (const name of Object.keys(map)) names.add(name);
    }
    const required = node.required;
    if (Array.isArray(required)) for (const name of required) if (typeof name === 'string') names.add(name);
    for (const sub of subSchemas(node, '', false)) stack.push(sub.node);
  }
  return names;
}

function location(instancePath: string, declared: ReadonlySet<string>): string {
  if (instancePath === '') return '/';
  return instancePath
    .split('/')
    .slice(1)
    .map((raw) => {
      const name = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      return /^(0|[1-9][0-9]{0,9})$/.test(name) || declared.has(name) ? raw : '*';
    })
    .map((segment) => '/' + segment)
    .join('');
}

const numeric = (v: unknown): string | undefined => (typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined);

/** The schema-side detail of a keyword's failure (a limit, a type, a declared name), if any. */
function detail(error: ErrorObject, declared: ReadonlySet<string>): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return ` ${Array.isArray(p.type) ? p.type.join(',') : String(p.type)}`;
    case 'required':
    case 'dependentRequired':
    case 'dependencies':
      return typeof p.missingProperty === 'string' && declared.has(p.missingProperty) ? ` ${JSON.stringify(p.missingProperty)}` : '';
    case 'format':
      return typeof p.format === 'string' ? ` ${p.format}` : '';
    case 'multipleOf':
      return ` ${numeric(p.multipleOf) ?? ''}`.trimEnd();
    default: {
      const limit = numeric(p.limit);
      if (limit !== undefined) return typeof p.comparison === 'string' ? ` ${p.comparison} ${limit}` : ` ${limit}`;
      return '';
    }
  }
}

/** `/path: keyword detail` for the first error ajv reported, or a generic line when it gave none. */
export function explainSchemaError(errors: readonly ErrorObject[] | null | undefined, declared: ReadonlySet<string>): string {
  const error = errors?.[0];
  if (error === undefined) return '/: the schema refused the arguments';
  // A failing `if`/`then` branch names the failing keyword in its params; keep the outer keyword.
  const text = `${location(error.instancePath, declared)}: ${error.keyword}${detail(error, declared)}`;
  return text.length > messageCharsMax ? text.slice(0, messageCharsMax - 1) + '…' : text;
}
