/**
 * Folders as a kind of root (docs/ARCHITECTURE.md, "Sources"): `dir` or `prefix=dir`, served as they are and watched
 * for changes in place. The kind that takes every argument no other kind claims.
 */
import { statSync } from 'node:fs';
import path from 'node:path';

import { SkillsServeError } from '../../errors.js';
import type { RootSpec } from '../../index/types.js';
import { prefixSegments, type RootKind, type RootSource } from '../kind.js';

/**
 * Parses one root argument: `dir`, or `prefix=dir` to mount `dir` under an organizational prefix
 * (`acme/billing=./billing-skills` serves its skills as `skill://acme/billing/<skill>/…`). An argument starting
 * with `/`, `./` or `../` is always a directory, so paths holding `=` stay usable.
 *
 * @param arg the argument as typed.
 * @param cwd directory relative paths are resolved against.
 * @returns the root with an absolute `dir` and the prefix segments.
 * @throws RangeError when the prefix is empty or holds an empty, `.` or `..` segment.
 */
export function parseRootArg(arg: string, cwd: string): RootSpec {
  const equals = arg.indexOf('=');
  // An absolute or explicitly relative path is a directory even when it holds '=' (`/srv/build=42/skills`).
  const plainPath = path.isAbsolute(arg) || arg.startsWith('./') || arg.startsWith('../') || arg.startsWith('.\\');
  if (equals === -1 || plainPath) return Object.freeze({ dir: path.resolve(cwd, arg), prefix: Object.freeze([]) });
  const dirText = arg.slice(equals + 1);
  const prefix = prefixSegments(arg.slice(0, equals));
  if (dirText === '' || prefix === undefined) {
    throw new RangeError(
      `root "${arg}" must be a directory or prefix=directory, with a prefix of non-empty "/"-separated names (e.g. acme/billing=./skills)`,
    );
  }
  return Object.freeze({ dir: path.resolve(cwd, dirText), prefix: Object.freeze(prefix) });
}

/** A folder root argument, parsed. */
export interface FolderSourceSpec {
  readonly kind: 'folder';
  readonly root: RootSpec;
}

/**
 * Checks that a folder is a directory.
 *
 * @param arg the argument as typed: `git@github.com:acme/skills` (git's scp-like syntax) gets a hint.
 * @throws SkillsServeError `ROOT_UNUSABLE` naming the resolved absolute path when it is missing or not a directory.
 */
function checkFolder(spec: FolderSourceSpec, arg: string): void {
  const { dir } = spec.root;
  let stat;
  try {
    stat = statSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    // `git@github.com:acme/skills` is git's scp-like syntax, not a folder: say how to write it as a git root.
    const scpLike = /^[\w.-]+@[\w.-]+:(?!\/\/)/u.test(arg) && code === 'ENOENT';
    throw new SkillsServeError(
      'ROOT_UNUSABLE',
      `skills root ${dir} cannot be used (${code === 'ENOENT' ? 'it does not exist' : code})` +
        (scpLike ? `; for a git remote, write git+ssh://${arg.replace(':', '/')}` : ''),
    );
  }
  if (!stat.isDirectory()) throw new SkillsServeError('ROOT_UNUSABLE', `skills root ${dir} is not a directory`);
}

/** A folder is served as it is, changes in place (the watcher follows it), and is never replaced. */
function folderSource(root: RootSpec): RootSource {
  return {
    start: () => Promise.resolve(root),
    changesInPlace: true,
    pinned: false,
    nextRefreshAt: undefined,
    follow: () => undefined,
    stop: () => Promise.resolve(),
  };
}

/** The folder kind. */
export const folderKind: RootKind<FolderSourceSpec, undefined> = {
  name: 'folder',
  parse: (arg, cwd) => ({ kind: 'folder', root: parseRootArg(arg, cwd) }),
  check: checkFolder,
  describe: ({ root }) => (root.prefix.length === 0 ? root.dir : `${root.prefix.join('/')}=${root.dir}`),
  fixedDirectory: (spec) => spec.root.dir,
  source: (spec) => folderSource(spec.root),
};
