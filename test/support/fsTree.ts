import { mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real directory tree for the escape corpus: `allowed/` is what the grant names; everything else
 * under the root is outside and holds files marked SECRET. Returned paths are real (no symlink).
 *
 * root/
 *   allowed/  a.txt  sub/b.txt  sub/deeper/c.txt  café/f.txt (NFC)  cafe\u0301/f.txt (NFD twin)
 *             'trail ' and 'trail' (two files)  quote'  swap.txt
 *             link-inside -> sub/b.txt   dirlink-inside -> sub   abs-inside -> <root>/allowed/a.txt
 *             chain1 -> chain2 -> chain3 -> a.txt   link-to-parent -> ..
 *             esc-file -> ../secret/s.txt   esc-dir -> ../secret   esc-abs -> <root>/secret/s.txt
 *             chain-out1 -> chain-out2 -> ../secret/s.txt   mid-out -> ../secret/x/y
 *             dangling-out -> ../nowhere/new.txt   dangling-in -> missing.txt
 *             loop1 -> loop2 -> loop1   self-loop -> self-loop
 *   secret/   s.txt  x/s2.txt  x/y/
 *   allowed_evil/ allowed-x/ 'allowed '/ allowed'/ allowed"/ 'allowed\t'/ (each e.txt)
 *   alias -> allowed
 */
export interface FsTree {
  readonly root: string;
  readonly allowed: string;
  /** Files and link targets outside `allowed/`, with their contents: must be unchanged after every test. */
  outside(): Record<string, string>;
  remove(): void;
}

export function buildFsTree(): FsTree {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'atc-fs-')));
  const allowed = join(root, 'allowed');
  const file = (path: string, text: string): void => writeFileSync(join(root, path), text);
  const dir = (path: string): void => void mkdirSync(join(root, path), { recursive: true });
  const link = (path: string, target: string): void => symlinkSync(target, join(root, path));

  dir('allowed/sub/deeper');
  dir('allowed/café');
  dir('allowed/cafe\u0301');
  file('allowed/a.txt', 'A');
  file('allowed/sub/b.txt', 'B');
  file('allowed/sub/deeper/c.txt', 'C');
  file('allowed/café/f.txt', 'NFC');
  file('allowed/cafe\u0301/f.txt', 'NFD');
  file('allowed/trail ', 'TRAIL-SPACE');
  file('allowed/trail', 'TRAIL');
  file("allowed/quote'", 'QUOTE');
  file('allowed/swap.txt', 'SWAP');
  link('allowed/link-inside', 'sub/b.txt');
  link('allowed/dirlink-inside', 'sub');
  link('allowed/abs-inside', join(root, 'allowed/a.txt'));
  link('allowed/chain1', 'chain2');
  link('allowed/chain2', 'chain3');
  link('allowed/chain3', 'a.txt');
  link('allowed/link-to-parent', '..');
  link('allowed/esc-file', '../secret/s.txt');
  link('allowed/esc-dir', '../secret');
  link('allowed/esc-abs', join(root, 'secret/s.txt'));
  link('allowed/chain-out1', 'chain-out2');
  link('allowed/chain-out2', '../secret/s.txt');
  link('allowed/mid-out', '../secret/x/y');
  link('allowed/dangling-out', '../nowhere/new.txt');
  link('allowed/dangling-in', 'missing.txt');
  link('allowed/loop1', 'loop2');
  link('allowed/loop2', 'loop1');
  link('allowed/self-loop', 'self-loop');

  dir('secret/x/y');
  file('secret/s.txt', 'SECRET');
  file('secret/x/s2.txt', 'SECRET-2');
  for (const sibling of ['allowed_evil', 'allowed-x', 'allowed ', "allowed'", 'allowed"', 'allowed\t']) {
    dir(sibling);
    file(`${sibling}/e.txt`, `SECRET-${sibling}`);
  }
  link('alias', 'allowed');

  const outside = (): Record<string, string> => {
    const found: Record<string, string> = {};
    const walk = (path: string): void => {
      for (const name of readdirSync(path)) {
        const full = join(path, name);
        if (full === allowed) continue;
        const stats = lstatSync(full);
        if (stats.isSymbolicLink()) found[full] = `-> ${readlinkSync(full)}`;
        else if (stats.isDirectory()) {
          found[`${full}/`] = 'dir';
          walk(full);
        } else found[full] = readFileSync(full, 'utf8');
      }
    };
    walk(root);
    return found;
  };
  return { root, allowed, outside, remove: () => rmSync(root, { recursive: true, force: true }) };
}
