import type { JsonObject, JsonValue } from '../domain/json';
import { limits } from '../domain/limits';
import { fanOutKeywords, inPlaceKeywords, jsonNodes, listKeywords, mapKeywords, subSchemas } from './schemaWalk';

/**
 * The static bounds a schema must meet before ajv compiles it, so that checking arguments against
 * it costs at most a known multiple of the arguments' size:
 * - only local `$ref`s (`#` or `#/json/pointer`), never recursive: without a cycle each schema node is
 *   applied at most once per argument node, so work is (unfolded schema size) × (argument size);
 *   a cycle would let a shared sub-schema be applied 2^depth times;
 * - no `$id` below the root, `$anchor`, `$dynamicRef`/`$dynamicAnchor`, `$recursiveRef`/`$recursiveAnchor`
 *   (refs this walk would have to resolve the way ajv does); `$schema` only at the root;
 * - at most `schemaNestingMax` levels and `schemaNodesMax` JSON values once every `$ref` is unfolded;
 * - an agent's narrowing has no `$ref` at all.
 * It also measures the schema's work per byte of arguments (`fanOut`, weights below): what is applied
 * to every item or member (under `items`, `contains`, `additionalProperties`, `patternProperties`…),
 * plus the keywords applied once whose cost grows with the value they read (`pattern`, `uniqueItems`,
 * `format`, `min/maxProperties`). Checking a call then costs about `fanOut × bytes` units plus the
 * schema's size (every other node runs once, at a fixed place).
 */
export type SchemaBounds = { readonly ok: true; readonly fanOut: number; readonly nodes: number } | { readonly ok: false; readonly problem: string };

const regexWeight = 1;
const refusedKeywords = new Set(['$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor']);

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSubschemaKey = (key: string): boolean => inPlaceKeywords.has(key) || fanOutKeywords.has(key) || listKeywords.has(key) || mapKeywords.has(key);

class Refused extends Error {}

function resolvePointer(root: JsonValue, ref: string): { node: JsonValue; path: string } {
  if (ref !== '#' && !ref.startsWith('#/')) throw new Refused(`$ref ${JSON.stringify(ref.slice(0, 80))} is not a local JSON Pointer (#/…)`);
  let node: JsonValue | undefined = root;
  let decoded: string;
  try {
    decoded = decodeURIComponent(ref.slice(1));
  } catch {
    throw new Refused(`$ref ${JSON.stringify(ref.slice(0, 80))} is not a valid URI fragment`);
  }
  for (const raw of decoded === '' ? [] : decoded.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = node !== null && typeof node === 'object' && Object.prototype.hasOwnProperty.call(node, token) ? (node as Record<string, JsonValue>)[token] : undefined;
    if (node === undefined) throw new Refused(`$ref ${JSON.stringify(ref.slice(0, 80))} names nothing in the schema`);
  }
  return { node: node as JsonValue, path: decoded };
}

/** Checks a schema's static bounds and measures it (see SchemaBounds). Never throws. */
export function schemaBounds(schema: JsonObject, from: 'host' | 'agent'): SchemaBounds {
  const memo = new Map<string, number>();
  const inProgress = new Set<string>();
  let nodes = 0;
  let fanOut = 0;
  // Weight of a subtree with every $ref unfolded; `count` adds it to the totals (refs are counted
  // through their targets' memoised weight, so a target is walked once).
  const visit = (node: JsonValue, path: string, depth: number): number => {
    if (depth > limits.schemaNestingMax) throw new Refused(`the schema nests deeper than ${limits.schemaNestingMax} levels at ${path}`);
    if (!isObject(node)) return 1;
    let weight = 1;
    for (const [key, value] of Object.entries(node)) {
      if (refusedKeywords.has(key)) throw new Refused(`keyword ${key} at ${path} is not supported (only local, non-recursive $ref)`);
      if (key === '$schema' && path !== '#') throw new Refused(`$schema is only read at the root, not at ${path}`);
      if (key === '$id' && path !== '#') throw new Refused(`$id is only read at the root, not at ${path}`);
      if (key === '$ref') {
        if (from === 'agent') throw new Refused(`$ref at ${path}: a narrowing from an agent may not use $ref`);
        if (typeof value !== 'string') continue; // the meta-schema refuses it
        weight += refWeight(value, depth);
        continue;
      }
      if (isSubschemaKey(key)) continue; // walked below, with their own fan-out flag
      const own = key === 'pattern' ? regexWeight : jsonNodes(value);
      weight += own;
    }
    if (isObject(node.patternProperties)) weight += regexWeight * Object.keys(node.patternProperties).length;
    for (const sub of subSchemas(node, path, false)) weight += visit(sub.node, sub.path, depth + 1);
    return weight;
  };
  const refWeight = (ref: string, depth: number): number => {
    const target = resolvePointer(schema, ref);
    const cached = memo.get(target.path);
    if (cached !== undefined) return cached;
    if (inProgress.has(target.path)) throw new Refused(`$ref ${JSON.stringify(ref.slice(0, 80))} is recursive`);
    inProgress.add(target.path);
    const weight = visit(target.node, `#${target.path}`, depth + 1);
    inProgress.delete(target.path);
    memo.set(target.path, weight);
    return weight;
  };
  try {
    nodes = visit(schema, '#', 0);
    fanOut = fanOutWeight(schema);
  } catch (error) {
    if (error instanceof Refused) return { ok: false, problem: error.message };
    throw error;
  }
  if (nodes > limits.schemaNodesMax) return { ok: false, problem: `the schema holds ${nodes} JSON values with every $ref unfolded, over the bound of ${limits.schemaNodesMax}` };
  return { ok: true, fanOut, nodes };
}

// Work units per byte of arguments, calibrated on ajv 8 and re2js 2.10 (one unit ≈ 25 ns; see
// experiments/bench/scenarios/schemaWork.ts): a JSON value applied to every item or member may fail
// and build an error object per item (measured up to ≈ 1 µs with ajv's messages, an item taking at least 2 bytes); a regular expression
// applied per item or member name pays RE2's set-up (≈ 1.3 µs) each time; one applied once reads its
// string at ≈ 25 ns a character; `uniqueItems`, `format`, `min/maxProperties` read their value once.
const fanOutNodeWeight = 16;
const fanOutRegexWeight = 32;

// The work per byte of a schema (refs are refused for agents, whose narrowings this is used for; for
// a host schema a $ref under a fan-out keyword counts as one value).
function fanOutWeight(node: JsonValue): number {
  let weight = linearWeight(node);
  for (const sub of subSchemas(node, '', false)) weight += sub.fanOut ? ownWeightDeep(sub.node) : fanOutWeight(sub.node);
  return weight;
}

// Keywords applied once but whose cost grows with the value they read (a string, an array, an
// object's members), which may be most of the call's bytes.
function linearWeight(node: JsonValue): number {
  if (!isObject(node)) return 0;
  let weight = typeof node.pattern === 'string' ? regexWeight : 0;
  // Pattern-property regexes run on every member's name.
  if (isObject(node.patternProperties)) weight += fanOutRegexWeight * Object.keys(node.patternProperties).length;
  for (const key of ['uniqueItems', 'format', 'minProperties', 'maxProperties']) if (key in node) weight += 1;
  return weight;
}

function ownWeightDeep(node: JsonValue): number {
  if (!isObject(node)) return fanOutNodeWeight;
  let weight = fanOutNodeWeight;
  for (const [key, value] of Object.entries(node)) {
    if (isSubschemaKey(key)) continue;
    weight += key === 'pattern' ? fanOutRegexWeight : fanOutNodeWeight * jsonNodes(value);
  }
  if (isObject(node.patternProperties)) weight += fanOutRegexWeight * Object.keys(node.patternProperties).length;
  for (const sub of subSchemas(node, '', true)) weight += ownWeightDeep(sub.node);
  return weight;
}
