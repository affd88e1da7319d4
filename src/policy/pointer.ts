/** JSON Pointers (RFC 6901) into a policy: `/tools/0`, `/args/write_file/properties/content`. */
export function pointer(...tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${String(t).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * The pointer of a field as `PolicyError` names it (`scopes[0]`, `budget.calls`,
 * `resources["read_file"][0]`, `(policy)`): the whole policy (`''`) when it cannot be read.
 */
export function fieldPointer(field: string): string {
  const tokens: string[] = [];
  const part = /^(?:\.?([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;
  let rest = field;
  while (rest !== '') {
    const m = part.exec(rest);
    if (m === null) return '';
    if (m[3] !== undefined) {
      try {
        tokens.push(JSON.parse(m[3]) as string);
      } catch {
        return '';
      }
    } else tokens.push((m[1] ?? m[2]) as string);
    rest = rest.slice(m[0].length);
  }
  return pointer(...tokens);
}
