import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { canonicalJson } from '../domain/canonicalJson';
import type { JsonObject, JsonValue } from '../domain/json';
import { setOwn } from '../domain/ownData';

type MutableSchema = { [key: string]: JsonValue | MutableSchema };

const combinators = ['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'not'] as const;

function isObject(value: unknown): value is MutableSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Closes object schemas that forgot `additionalProperties: false`, so an agent cannot smuggle
 * properties the tool never declared. Only schemas with `properties` are closed, recursively through
 * `properties` and `items`; a schema that composes objects (allOf/anyOf/…) or sets
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

export type ArgumentValidator = (args: JsonObject) => boolean;

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

/** Compiles JSON Schemas once (cached by canonical form) with ajv; one compiler per ledger. */
export class SchemaCompiler {
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    // ownProperties: `required`/`properties` look at own members only, so a missing `constructor`
    // or `toString` is missing, not satisfied by Object.prototype's.
    // strictNumbers: `number` and `integer` refuse NaN and ±Infinity, which no JSON holds (arguments
    // are plain JSON before they get here; this is the validator's own guarantee too).
    // strictSchema: an unknown keyword (`maxLenght`) or format is an error, not a rule that allows
    // everything. The other strict rules (strictTypes, strictTuples, strictRequired) stay off, so
    // `{ properties: { text: { maxLength: 200 } } }` without `type` remains a valid narrowing.
    this.ajv = new Ajv({ allErrors: false, strict: false, strictSchema: true, strictNumbers: true, ownProperties: true, coerceTypes: false, useDefaults: false, removeAdditional: false, validateSchema: true, addUsedSchema: false });
    addFormats(this.ajv);
  }

  private compileCached(schema: JsonValue): ValidateFunction {
    const key = canonicalJson(schema);
    let fn = this.cache.get(key);
    if (fn === undefined) {
      const proto = protoNamedAt(schema);
      if (proto !== undefined) throw new Error(`the schema names the property __proto__ at ${proto}, which JSON Schema validators ignore`);
      try {
        fn = this.ajv.compile(schema as object);
      } catch (error) {
        // ajv says an unknown format is "ignored" when it is not strict; here it is refused.
        throw new Error((error as Error).message.replace(/ ignored in schema/, ' in schema'), { cause: error });
      }
      this.cache.set(key, fn);
    }
    return fn;
  }

  /** A tool's inputSchema: an object schema whose undeclared properties are refused. */
  compileToolSchema(inputSchema: JsonObject): ArgumentValidator {
    const validate = this.compileCached(closeObjectSchemas(inputSchema));
    const declared = declaredTopLevel(inputSchema);
    return (args) => {
      if (declared !== undefined) for (const key of Object.keys(args)) if (!declared(key)) return false;
      return validate(args) === true;
    };
  }

  /** A grant's narrowing schema, applied as written. */
  compileNarrowing(schema: JsonObject): ArgumentValidator {
    const validate = this.compileCached(schema);
    return (args) => validate(args) === true;
  }
}
