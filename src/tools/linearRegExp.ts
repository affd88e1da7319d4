import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/**
 * The regular-expression engine ajv runs `pattern` and `patternProperties` with, linear in the input
 * whatever the pattern, so no pattern (a tool's, a host's or an agent's) can backtrack
 * catastrophically inside the serialized admission step:
 * - a pattern of the backtracking-safe shape (see `backtrackSafe`) runs on V8's own engine, with
 *   ECMAScript semantics, as JSON Schema specifies (most tool patterns: `^[a-z0-9_-]+$`,
 *   `^https?://`, `^\d{4}-\d{2}-\d{2}$`); RE2 would cost ≈ 10 µs a call on these instead of 0.1;
 * - any other runs on RE2 (the pure-JS port `re2js`), whose matching time is linear by construction.
 *   Constructs RE2 cannot run in linear time (lookaround, backreferences) fail to compile: the schema
 *   is refused. RE2 reads `\s`, `\b` and `.` in its own way (ASCII space classes; `.` excludes only `\n`).
 */
function engine(pattern: string, flags: string): RegExpLike {
  if (backtrackSafe(pattern)) return new RegExp(pattern, flags);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    // Reworded: ajv reports this as the schema's error, and the host needs to know why.
    throw new Error(`pattern ${JSON.stringify(pattern.slice(0, 80))} is not supported by the linear-time engine (RE2: no lookaround or backreferences): ${(error as Error).message}`);
  }
  // ajv keys its compiled patterns by `toString()`: each pattern needs its own text, as a RegExp has.
  const like = { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` };
  return like;
}

const countedQuantifier = /^\{(\d+)(,(\d*))?\}/;

/**
 * Whether a backtracking engine matches this pattern in time linear in the input: anchored at the
 * start (`^`, so one start position), no group and no alternation, no backreference, and at most one
 * quantifier that can match a varying number of times (`*`, `+`, `?`, `{m,}`, `{m,n}` with n > m),
 * applied to a single character or class. The quantified atom is then tried at most once per input
 * position, each try followed by a fixed-length tail: O(input × pattern).
 */
export function backtrackSafe(pattern: string): boolean {
  if (!pattern.startsWith('^')) return false;
  let varying = 0;
  let inClass = false;
  for (let i = 1; i < pattern.length; ) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || /[1-9k]/.test(next)) return false; // a backreference
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        if (end < 0) return false;
        i = end + 1;
      } else i += 2;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      i++;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(' || c === ')' || c === '|') return false;
    else if (c === '*' || c === '+' || c === '?') {
      varying++;
      if (pattern[i + 1] === '?') i++; // lazy
    } else if (c === '{') {
      const counted = countedQuantifier.exec(pattern.slice(i, i + 24));
      if (counted === null) return false;
      if (counted[2] !== undefined && counted[3] !== counted[1]) varying++;
      i += counted[0].length;
      continue;
    }
    i++;
  }
  return !inClass && varying <= 1;
}

export const linearRegExp: RegExpEngine = Object.assign(engine, { code: 'linearRegExp' });
