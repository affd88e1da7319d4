import type { JsonObject } from '../../domain/json';

/**
 * Resource templates map a call's arguments to the resources it touches: `"fs:{path}"` (one file
 * path argument), `"fs:{paths[]}"` (each element of an array argument), `"url:{url}"`, or any
 * `scheme:` text with `{name}` placeholders (`"notes:/{folder}/{name}"`), whose values are pasted in
 * and then checked in canonical form by the ledger. Anything that cannot be mapped throws, which
 * the ledger turns into `invalid_resource` (fail closed): an absent or non-string argument, a
 * relative `fs:` path without `fsBase`, a URL with userinfo.
 */
export interface TemplateResolvers {
  /** The `fs:` resource of a path (absolute, or relative to `base`). */
  readonly fs: (path: string, base: string | undefined) => string;
  /** The canonical resource of a URL. */
  readonly url: (url: string) => string;
}

const placeholder = /\{([A-Za-z_$][\w$.-]{0,127})(\[\])?\}/g;
const wholeTemplate = /^(fs|url):\{([A-Za-z_$][\w$.-]{0,127})(\[\])?\}$/;

/** Says what is wrong with a template's text, or undefined. */
export function templateProblem(template: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:/.test(template)) return 'must start with a scheme such as "fs:" or "notes:"';
  const names = Array.from(template.matchAll(placeholder));
  if (names.length === 0) return 'names no argument: use {name} or {name[]}';
  if (template.replace(placeholder, '').includes('{') || template.replace(placeholder, '').includes('}')) return 'has a malformed {placeholder}';
  if (names.filter((m) => m[2] !== undefined).length > 1) return 'may expand at most one array argument ({name[]})';
  if ((template.startsWith('fs:') || template.startsWith('url:')) && !wholeTemplate.test(template)) return 'fs: and url: templates are exactly "fs:{name}" / "url:{name}" (or {name[]})';
  return undefined;
}

class TemplateArgumentError extends Error {
  override readonly name = 'TemplateArgumentError';
}

function stringArgument(args: JsonObject, name: string): string {
  const value = Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined;
  if (typeof value !== 'string') throw new TemplateArgumentError(`argument ${name} is absent or not a string`);
  return value;
}

function arrayArgument(args: JsonObject, name: string): readonly string[] {
  const value = Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new TemplateArgumentError(`argument ${name} is absent or not an array of strings`);
  return value as string[];
}

/** The resources one template names for these arguments. */
export function expandTemplate(template: string, args: JsonObject, fsBase: string | undefined, resolvers: TemplateResolvers): string[] {
  const whole = wholeTemplate.exec(template);
  if (whole !== null) {
    const [, scheme, name, array] = whole as unknown as [string, 'fs' | 'url', string, string | undefined];
    const values = array !== undefined ? arrayArgument(args, name) : [stringArgument(args, name)];
    return values.map((v) => (scheme === 'fs' ? resolvers.fs(v, fsBase) : resolvers.url(v)));
  }
  const matches = Array.from(template.matchAll(placeholder));
  const arrayName = matches.find((m) => m[2] !== undefined)?.[1];
  const fill = (element: string | undefined): string => template.replace(placeholder, (_all, name: string, array?: string) => (array !== undefined ? (element as string) : stringArgument(args, name)));
  if (arrayName === undefined) return [fill(undefined)];
  return arrayArgument(args, arrayName).map((element) => fill(element));
}

/** Every resource a call names under a tool's templates. */
export function templateResources(templates: readonly string[], args: JsonObject, fsBase: string | undefined, resolvers: TemplateResolvers): string[] {
  return templates.flatMap((t) => expandTemplate(t, args, fsBase, resolvers));
}
