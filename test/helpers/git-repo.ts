/**
 * Real git repositories for tests: a work repository the test commits into and a bare repository it pushes to, which
 * the code under test fetches from (`file://`, or over smart HTTP through `git-http.ts`). Every git run here uses an
 * isolated configuration (no system or user config), a fixed identity and fixed dates, so commit ids do not depend on
 * the machine.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { addToTree, makeTempDir, type TreeEntry } from './tree.js';

/** The environment every helper git run gets: nothing from the developer's own git setup. */
export function isolatedGitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    ...extra,
  };
}

/** Runs git in `cwd` with the isolated environment; returns trimmed stdout. Throws (with git's stderr) on failure. */
export function git(cwd: string, args: readonly string[], input?: string | Uint8Array): string {
  return execFileSync('git', args, {
    cwd,
    env: isolatedGitEnv(),
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  }).trim();
}

/** A work repository with a bare "remote" it pushes to. */
export interface TestRemote {
  /** The directory all bare repositories live in (the HTTP bridge's project root). */
  readonly projectRoot: string;
  /** Absolute path of the bare repository (`<projectRoot>/<name>.git`). */
  readonly bare: string;
  /** `file://` URL of the bare repository. */
  readonly fileUrl: string;
  /** The repository name with `.git` (its path under an HTTP bridge). */
  readonly name: string;
  /** The work repository the test edits. */
  readonly work: string;
  /**
   * Writes `spec` into the work tree (see `makeTree`), removes `remove` (relative paths), commits everything and
   * pushes the branch to the bare repository. With `signingKey` (an ssh private key file), the commit is signed with
   * it (`gpg.format=ssh`, `commit -S`).
   *
   * @returns the new commit id.
   */
  commit(
    spec: Record<string, TreeEntry>,
    message?: string,
    options?: { remove?: readonly string[]; branch?: string; signingKey?: string },
  ): Promise<string>;
  /** Creates an annotated tag at the work repository's HEAD and pushes it. */
  tag(name: string): void;
}

let counter = 0;

/**
 * Creates an empty bare repository `<name>.git` under a fresh project root, and a work repository on branch `main`.
 *
 * @param name repository name without `.git`.
 * @param projectRoot an existing directory to hold the bare repository (default: a fresh temp directory).
 */
export async function createRemote(name = 'skills', projectRoot?: string): Promise<TestRemote> {
  const root = projectRoot ?? (await makeTempDir());
  const bare = path.join(root, `${name}.git`);
  const work = path.join(await makeTempDir(), `work-${counter++}`);
  await fsp.mkdir(work);
  git(root, ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  git(work, ['init', '--quiet', '--initial-branch=main']);
  git(work, ['remote', 'add', 'origin', bare]);
  let tick = 0;
  return {
    projectRoot: root,
    bare,
    fileUrl: pathToFileURL(bare).href,
    name: `${name}.git`,
    work,
    async commit(spec, message = 'change', options = {}) {
      const branch = options.branch ?? 'main';
      if (git(work, ['symbolic-ref', '--short', 'HEAD']) !== branch) {
        const exists = git(work, ['branch', '--list', branch]) !== '';
        git(work, exists ? ['checkout', '--quiet', branch] : ['checkout', '--quiet', '-b', branch]);
      }
      for (const rel of options.remove ?? [])
        await fsp.rm(path.join(work, ...rel.split('/')), { recursive: true, force: true });
      await addToTree(work, spec);
      git(work, ['add', '--all']);
      // Distinct committer dates keep commit ids distinct even when two commits hold the same tree.
      tick += 1;
      const date = `2026-01-01T00:${String(Math.floor(tick / 60)).padStart(2, '0')}:${String(tick % 60).padStart(2, '0')}Z`;
      const key = options.signingKey;
      const signed =
        key === undefined ? ['commit'] : ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`, 'commit', '-S'];
      execFileSync('git', [...signed, '--quiet', '--allow-empty', '-m', message], {
        cwd: work,
        env: isolatedGitEnv({ GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }),
        stdio: 'pipe',
      });
      git(work, ['push', '--quiet', 'origin', `${branch}:refs/heads/${branch}`]);
      return git(work, ['rev-parse', 'HEAD']);
    },
    tag(tagName) {
      git(work, ['tag', '-a', '-m', tagName, tagName]);
      git(work, ['push', '--quiet', 'origin', `refs/tags/${tagName}`]);
    },
  };
}

/** A file's bytes or a symlink's target, as committed or as found on disk. */
export type TreeContent = Record<string, Buffer | { symlink: string }>;

/**
 * What a commit holds under `subdir`, read from the bare repository with git itself (`ls-tree` + `cat-file blob`):
 * the expectation a materialized tree is compared against. Submodules are left out.
 */
export function committedTree(bare: string, commit: string, subdir = ''): TreeContent {
  const treeish = subdir === '' ? commit : `${commit}:${subdir}`;
  const out: TreeContent = {};
  const listing = execFileSync('git', ['--git-dir', bare, 'ls-tree', '-r', '-z', treeish], {
    env: isolatedGitEnv(),
  }).toString('utf8');
  for (const record of listing.split('\0').filter((line) => line !== '')) {
    const [meta, rel] = record.split('\t') as [string, string];
    const [mode, type, object] = meta.split(' ') as [string, string, string];
    if (type !== 'blob') continue;
    const bytes = execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', object], { env: isolatedGitEnv() });
    out[rel] = mode === '120000' ? { symlink: bytes.toString('utf8') } : bytes;
  }
  return out;
}

/** Every file and symlink under `dir` (relative `/` paths), read from disk without following links. */
export async function diskTree(dir: string): Promise<TreeContent> {
  const out: TreeContent = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const entry of await fsp.readdir(abs, { withFileTypes: true })) {
      const childAbs = path.join(abs, entry.name);
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) out[childRel] = { symlink: await fsp.readlink(childAbs) };
      else if (entry.isDirectory()) await walk(childAbs, childRel);
      else out[childRel] = await fsp.readFile(childAbs);
    }
  };
  await walk(dir, '');
  return out;
}
