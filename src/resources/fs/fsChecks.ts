import { limits } from '../../domain/limits';
import type { RealLocation } from './realPath';

/** One `fsResource` call made while a call's resources were checked: what was asked, what it led to. */
export interface FsCheck extends RealLocation {
  readonly path: string;
  readonly base: string | undefined;
}

let collecting: FsCheck[] | undefined;

/**
 * Runs `named` (a tool's `resources(args)`) and gathers what each `fsResource` inside it resolved,
 * so `ctx.open` can compare the object it opens with the one that was checked. Synchronous, so no
 * other call's resolution can interleave; nested runs keep their own lists.
 */
export function collectFsChecks<T>(named: () => T): { readonly value: T; readonly checks: readonly FsCheck[] } {
  const outer = collecting;
  const checks: FsCheck[] = [];
  collecting = checks;
  try {
    return { value: named(), checks };
  } finally {
    collecting = outer;
  }
}

export function noteFsCheck(check: FsCheck): void {
  if (collecting !== undefined && collecting.length < limits.resourcesPerCallMax) collecting.push(check);
}
