import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsResource, fsScope, isCanonicalResource, ResourceRefusedError } from '../../src';
import { buildFsTree, type FsTree } from '../support/fsTree';

let tree: FsTree;
beforeAll(() => {
  tree = buildFsTree();
});
afterAll(() => tree.remove());

const refusal = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof ResourceRefusedError ? error.code : `other: ${(error as Error).name}`;
  }
};
const inAllowed = (path: string): string => fsResource(path, { base: tree.allowed });

describe('fsResource', () => {
  it('maps a real path to its canonical fs: resource', () => {
    expect(inAllowed('sub/b.txt')).toBe(`fs:${tree.allowed}/sub/b.txt`);
    expect(isCanonicalResource(inAllowed('sub/b.txt'))).toBe(true);
    expect(fsResource('/')).toBe('fs:/');
  });
  it('refuses a relative path without a base', () => {
    expect(refusal(() => fsResource('a.txt'))).toBe('invalid_resource');
  });
  it('throws a TypeError for a base that is not an absolute existing folder (a host error)', () => {
    expect(refusal(() => fsResource('a.txt', { base: 'relative' }))).toBe('other: TypeError');
    expect(refusal(() => fsResource('a.txt', { base: join(tree.allowed, 'a.txt') }))).toBe('other: TypeError');
  });
  it('resolves a base reached through a symlink to its real path', () => {
    expect(fsResource('a.txt', { base: join(tree.root, 'alias') })).toBe(`fs:${tree.allowed}/a.txt`);
  });
  it('resolves a path that does not exist yet through its deepest existing folder', () => {
    expect(inAllowed('dirlink-inside/new1/new2.txt')).toBe(`fs:${tree.allowed}/sub/new1/new2.txt`);
  });
  it('refuses .. below a folder that does not exist (the kernel cannot resolve it either)', () => {
    expect(refusal(() => inAllowed('missing/../a.txt'))).toBe('invalid_resource');
  });
  it('refuses a trailing slash after a file', () => {
    expect(refusal(() => inAllowed('a.txt/'))).toBe('invalid_resource');
  });
  it('refuses a real name that the resource grammar refuses, rather than rewriting it', () => {
    writeFileSync(join(tree.allowed, '100%.txt'), 'x');
    mkdirSync(join(tree.allowed, 'ﬁle'), { recursive: true }); // a ligature NFKC would change
    expect(refusal(() => inAllowed('100%.txt'))).toBe('invalid_resource');
    expect(refusal(() => inAllowed('ﬁle'))).toBe('invalid_resource');
    // …including when a symlink leads there.
    symlinkSync('100%.txt', join(tree.allowed, 'to-percent'));
    expect(refusal(() => inAllowed('to-percent'))).toBe('invalid_resource');
  });
  it('refuses a symlink whose target is not UTF-8 (it would alias another name when decoded)', () => {
    symlinkSync(Buffer.from([0x78, 0xff, 0x79]), join(tree.allowed, 'bad-bytes'));
    expect(refusal(() => inAllowed('bad-bytes'))).toBe('invalid_resource');
  });
  it('refuses a non-string path', () => {
    expect(refusal(() => fsResource(42 as unknown as string))).toBe('invalid_resource');
  });
});

describe('fsScope', () => {
  it('turns a real folder into a scope, resolving symlinks', () => {
    expect(fsScope(tree.allowed)).toBe(`fs:${tree.allowed}/`);
    expect(fsScope(join(tree.root, 'alias'))).toBe(`fs:${tree.allowed}/`);
    expect(fsScope('/')).toBe('fs:/');
  });
  it('throws a TypeError for a file, a missing folder or a relative path', () => {
    expect(refusal(() => fsScope(join(tree.allowed, 'a.txt')))).toBe('other: TypeError');
    expect(refusal(() => fsScope(join(tree.allowed, 'missing')))).toBe('other: TypeError');
    expect(refusal(() => fsScope('allowed'))).toBe('other: TypeError');
  });
  it('never lets a sibling prefix match: fs:/…/allowed/ does not cover …/allowed_evil', () => {
    const scope = fsScope(tree.allowed);
    expect(fsResource(join(tree.root, 'allowed_evil/e.txt')).startsWith(scope)).toBe(false);
  });
});
