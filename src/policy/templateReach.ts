const placeholder = /\{([A-Za-z_$][\w$.-]{0,127})(\[\])?\}/g;

/** The argument names a resource template's placeholders use (`fs:{paths[]}` → `paths`). */
export function templateArguments(template: string): string[] {
  return Array.from(template.matchAll(placeholder), (m) => m[1] as string);
}

/**
 * Whether some call could give `template` a resource under `scope`: `fs:` templates reach `fs:`
 * scopes, `url:` templates `http:`/`https:` scopes; any other template reaches a scope its literal
 * text before the first placeholder is compatible with (`notes:/{f}` reaches `notes:/drafts/`,
 * `notes:/drafts/{f}` reaches `notes:/`, neither reaches `mail:/`).
 */
export function scopeReachable(template: string, scope: string): boolean {
  if (template.startsWith('fs:')) return scope.startsWith('fs:');
  if (template.startsWith('url:')) return scope.startsWith('http:') || scope.startsWith('https:');
  const brace = template.indexOf('{');
  const prefix = brace < 0 ? template : template.slice(0, brace);
  // A scope without a trailing '/' covers one resource: the template must be able to spell it.
  return scope.startsWith(prefix) || (scope.endsWith('/') && prefix.startsWith(scope));
}
