import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/**
 * The regular-expression engine ajv runs `pattern` and `patternProperties` with: RE2 (the pure-JS
 * port `re2js`), whose matching time is linear in the input, so no pattern (a tool's, a host's or an
 * agent's) can backtrack catastrophically inside the serialized admission step. Constructs RE2
 * cannot run in linear time (lookaround, backreferences) fail to compile: the schema is refused.
 * The `u` flag is implied (RE2 reads code points).
 */
function re2(pattern: string): RegExpLike {
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

export const linearRegExp: RegExpEngine = Object.assign(re2, { code: 'linearRegExp' });
