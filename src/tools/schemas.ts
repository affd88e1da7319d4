import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { canonicalJson } from '../domain/canonicalJson';
import type { JsonObject, JsonValue } from '../domain/json';
import { setOwn } from '../domain/ownData';
import { addBoundedFormats } from './boundedFormats';
import { linearRegExp } from './linearRegExp';
import { schemaBounds } from './schemaBounds';
import { declaredNames, explainSchemaError } from './schemaErrors';
import { useLinearUniqueItems } from './uniqueItems';

type MutableSchema = { [key: string]: JsonValue | MutableSchema };

const combinators = ['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'not'] as const;

function isObject(value: unknown): value is MutableSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Closes object schemas that forgot `additionalProperties: false`, so an agent cannot smuggle
 * properties the tool never declared. Only schemas with `properties` are closed, recursively through
 * `properties`, `items` and `prefixItems`; a schema that composes objects (allOf/anyOf/…) or sets
 * `additionalProperties`/`unevaluatedProperties`/`patternProperties` itself keeps its own rule.
 */
export function closeObjectSchemas(schema: JsonValue): JsonValue {
  if (!isObject(schema)) return schema;
  const out: MutableSchema = { ...schema };
  const composes = combinators.some((k) => k in schema);
  // Only schemas that list their properties are closed: a bare `{ type: 'object' }` means "any
  // object" (AgentDojo's email attachments), and closing it would refuse every real value.
  const declaresProperties = isObject(schema.properties);
  if (declaresProperties && !composes && !('additionalProperties' in schema) && !('unevaluatedProperties' in schema) && !('patternProperties' in schema)) {
    out.additionalProperties = false;
  }
  if (isObject(schema.properties)) {
    const props: MutableSchema = {};
    for (const [name, sub] of Object.entries(schema.properties)) setOwn(props, name, closeObjectSchemas(sub as JsonValue));
    out.properties = props;
  }
  if (isObject(schema.items)) out.items = closeObjectSchemas(schema.items as JsonValue);
  else if (Array.isArray(schema.items)) out.items = schema.items.map((s) => closeObjectSchemas(s));
  if (Array.isArray(schema.prefixItems)) out.prefixItems = schema.prefixItems.map((s) => closeObjectSchemas(s));
  return out;
}

/** Names that the tool schema declares at the top level, for the undeclared-property rule. */
function declaredTopLevel(schema: JsonObject): ((key: string) => boolean) | undefined {
  // The host wrote its own rule. `additionalProperties: false` needs no check here either: ajv then
  // refuses every key its sibling `properties`/`patternProperties` do not name, a subset of these.
  if ('additionalProperties' in schema) return undefined;
  const names = new Set<string>();
  const patterns: RegExp[] = [];
  const collect = (s: JsonValue): void => {
    if (!isObject(s)) return;
    if (isObject(s.properties)) for (const name of Object.keys(s.properties)) names.add(name);
    if (isObject(s.patternProperties)) for (const p of Object.keys(s.patternProperties)) patterns.push(new RegExp(p, 'u'));
  };
  collect(schema);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) branches.forEach(collect);
  }
  return (key) => names.has(key) || patterns.some((p) => p.test(key));
}

/**
 * A compiled check of a call's arguments. `explain()` says what the last refused call failed, as
 * `/location: keyword detail` in the schema's own words (see schemaErrors.ts); `fanOut` is the
 * schema's weight applied to every item or member (schemaBounds.ts), for the agent work bound.
 */
export interface ArgumentValidator {
  (args: JsonObject): boolean;
  readonly explain: () => string;
  readonly fanOut: number;
}

/**
 * Where a schema names the property `__proto__` (a key of `properties`, `patternProperties`,
 * `dependentRequired`/`dependentSchemas`, or an entry of `required`), or undefined. ajv skips that
 * name, so such a rule would restrict nothing: the schema is refused instead. Walked without recursion.
 */
export function protoNamedAt(schema: JsonValue): string | undefined {
  const stack: [JsonValue, string][] = [[schema, '#']];
  while (stack.length > 0) {
    const [node, at] = stack.pop() as [JsonValue, string];
    if (node === null || typeof node !== 'object') continue;
    // An array's entries are its indexes ('0', '1', …), so one walk covers objects and arrays.
    for (const [key, value] of Object.entries(node)) {
      if (key === '__proto__') return at;
      if (key === 'required' && Array.isArray(value) && value.includes('__proto__')) return `${at}/required`;
      stack.push([value, `${at}/${key}`]);
    }
  }
  return undefined;
}

const draft07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft-07/schema']);
const draft2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#', 'http://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft/2020-12/schema#']);

/** Which dialect a schema is read in: 2020-12 unless its `$schema` names draft-07 (MCP 2025-11-25). */
function dialectOf(schema: JsonObject): 'draft-2020-12' | 'draft-07' {
  const declared = schema.$schema;
  if (declared === undefined || (typeof declared === 'string' && draft2020.has(declared))) return 'draft-2020-12';
  if (typeof declared === 'string' && draft07.has(declared)) return 'draft-07';
  throw new Error(`the schema declares $schema ${JSON.stringify(String(declared)).slice(0, 120)}, which is neither JSON Schema 2020-12 nor draft-07`);
}

function newAjv(dialect: 'draft-2020-12' | 'draft-07'): Ajv {
  // ownProperties: `required`/`properties` look at own members only, so a missing `constructor`
  // or `toString` is missing, not satisfied by Object.prototype's.
  // strictNumbers: `number` and `integer` refuse NaN and ±Infinity, which no JSON holds (arguments
  // are plain JSON before they get here; this is the validator's own guarantee too).
  // strictSchema: an unknown keyword (`maxLenght`) or format is an error, not a rule that allows
  // everything. The other strict rules (strictTypes, strictTuples, strictRequired) stay off, so
  // `{ properties: { text: { maxLength: 200 } } }` without `type` remains a valid narrowing.
  // code.regExp: RE2, linear-time (linearRegExp.ts).
  const options = { allErrors: false, strict: false, strictSchema: true, strictNumbers: true, ownProperties: true, coerceTypes: false, useDefaults: false, removeAdditional: false, validateSchema: true, addUsedSchema: false, code: { regExp: linearRegExp } } as const;
  const ajv = dialect === 'draft-07' ? new Ajv(options) : new Ajv2020(options);
  addBoundedFormats(ajv);
  useLinearUniqueItems(ajv);
  return ajv;
}

/** Compiles JSON Schemas once (cached by canonical form) with ajv; one compiler per ledger. */
export class SchemaCompiler {
  private readonly ajv = { 'draft-2020-12': newAjv('draft-2020-12'), 'draft-07': newAjv('draft-07') };
  private readonly cache = new Map<string, { readonly validate: ValidateFunction; readonly fanOut: number; readonly declared: ReadonlySet<string> }>();

  private compileCached(schema: JsonObject, from: 'host' | 'agent'): { readonly validate: ValidateFunction; readonly fanOut: number; readonly declared: ReadonlySet<string> } {
    const key = from + canonicalJson(schema);
    let compiled = this.cache.get(key);
    if (compiled === undefined) {
      const proto = protoNamedAt(schema);
      if (proto !== undefined) throw new Error(`the schema names the property __proto__ at ${proto}, which JSON Schema validators ignore`);
      const dialect = dialectOf(schema);
      const bounds = schemaBounds(schema, from);
      if (!bounds.ok) throw new Error(bounds.problem);
      // The dialect is chosen above; ajv then checks the schema against that dialect's meta-schema.
      const { $schema: _declared, ...body } = schema;
      let validate: ValidateFunction;
      try {
        validate = this.ajv[dialect].compile(body);
      } catch (error) {
        // ajv says an unknown format is "ignored" when it is not strict; here it is refused.
        throw new Error((error as Error).message.replace(/ ignored in schema/, ' in schema'), { cause: error });
      }
      compiled = { validate, fanOut: bounds.fanOut, declared: declaredNames(schema) };
      this.cache.set(key, compiled);
    }
    return compiled;
  }

  /** A tool's inputSchema: an object schema whose undeclared properties are refused. */
  compileToolSchema(inputSchema: JsonObject): ArgumentValidator {
    const { validate, fanOut, declared: names } = this.compileCached(closeObjectSchemas(inputSchema) as JsonObject, 'host');
    const declared = declaredTopLevel(inputSchema);
    let undeclaredKey = false;
    const check = (args: JsonObject): boolean => {
      undeclaredKey = false;
      if (declared !== undefined) {
        for (const key of Object.keys(args)) {
          if (!declared(key)) return !(undeclaredKey = true);
        }
      }
      return validate(args) === true;
    };
    // The key itself is the agent's: reported as ajv reports a closed object, without its name.
    const explain = (): string => (undeclaredKey ? '/: additionalProperties' : explainSchemaError(validate.errors, names));
    return Object.assign(check, { explain, fanOut });
  }

  /** A grant's narrowing schema, applied as written; `from: 'agent'` for an attenuation's (stricter bounds). */
  compileNarrowing(schema: JsonObject, from: 'host' | 'agent' = 'host'): ArgumentValidator {
    const { validate, fanOut, declared } = this.compileCached(schema, from);
    return Object.assign((args: JsonObject) => validate(args) === true, { explain: () => explainSchemaError(validate.errors, declared), fanOut });
  }
}
