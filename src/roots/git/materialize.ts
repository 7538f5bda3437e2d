/**
 * Writes one commit's tree (or a subdirectory of it) to disk from the cache's bare repository (docs/git-roots.md,
 * "Safety"): the listing comes from `git ls-tree`, the bytes from `git cat-file --batch`, and this module writes every
 * file itself. Nothing of git's checkout machinery runs, so no clean/smudge filter, eol or `ident` conversion, LFS
 * smudge or hook can: each file holds exactly its blob's bytes. Symlinks stay symlinks when they resolve inside the
 * written tree (the index's containment policy judges them then); a link that resolves outside it (absolute, climbing
 * out, or through other links) or to nothing is removed, whatever `--symlinks` says, since a repository must not be
 * able to point the server at the machine's own files. Such links and submodules (gitlinks) are skipped and reported.
 * Limits on files and bytes are checked against the listing before anything is written.
 *
 * The tree is written to a fresh directory under the cache's `tmp/` and renamed into place, so a tree directory
 * that exists is complete. Processes sharing the cache that write the same tree at once race only at that rename:
 * the first one in wins, the others drop their copy and use the winner's (the same bytes).
 */
import { constants, promises as fsp } from 'node:fs';
import path from 'node:path';

import { isPathWithin } from '../../paths.js';
import { BatchReader } from './batch.js';
import { tempTreeName } from './cache.js';
import { GitCommandError, gitUnavailable, runGit } from './command.js';
import { GitSourceError } from './errors.js';
import { spawnGit } from './exec.js';
import type { GitLimits } from './settings.js';

/** One entry of a tree listing. */
interface TreeEntry {
  /** `/`-separated path relative to the listed tree. */
  readonly path: string;
  readonly kind: 'file' | 'symlink' | 'submodule';
  readonly object: string;
  readonly size: number;
}

/** What was written. */
export interface MaterializedTree {
  /** The tree's final directory. */
  readonly dir: string;
  readonly files: number;
  readonly bytes: number;
  /** Paths left out, with the reason: submodules are not fetched; links resolving outside the tree are removed. */
  readonly skipped: readonly { readonly path: string; readonly reason: 'submodule' | 'link-outside-tree' }[];
}

/** What {@link materializeTree} needs. */
export interface MaterializeOptions {
  readonly gitDir: string;
  readonly commit: string;
  /** Subdirectory of the commit's tree to write (`''` for all). */
  readonly subdir: string;
  /** Final directory (must not exist yet; if it appears meanwhile, the existing one is kept). */
  readonly target: string;
  /** Where the tree is written before it is renamed to `target` (same file system). */
  readonly tmpDir: string;
  /** Most files and bytes of the tree (the download limit is the fetch's). */
  readonly limits: Pick<GitLimits, 'maxFiles' | 'maxBytes'>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** For messages: the remote's display form and the ref. */
  readonly describe: string;
}

/** Longest symlink target written (bytes; a longer one is left out as unresolvable, like `PATH_MAX`). */
const MAX_LINK_BYTES = 4096;

/** Parses `git ls-tree -r -z -l` output. @throws GitSourceError `git-failed` on a line it cannot read. */
function parseListing(output: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const record of output.toString('utf8').split('\0')) {
    if (record === '') continue;
    const match = /^(\d{6}) (blob|commit|tree) ([0-9a-f]{40,64}) +(\d+|-)\t(.+)$/su.exec(record);
    if (match === null)
      throw new GitSourceError('git-failed', `cannot read git ls-tree output line "${record.slice(0, 100)}"`);
    const [, mode, type, object, size, rel] = match as unknown as [string, string, string, string, string, string];
    const kind = type === 'commit' ? 'submodule' : mode === '120000' ? 'symlink' : 'file';
    if (type === 'tree') continue;
    entries.push({ path: rel, kind, object, size: size === '-' ? 0 : Number(size) });
  }
  return entries;
}

/** Whether a tree path is safe to join under the target: plain names only. */
function isSafePath(rel: string): boolean {
  return rel
    .split('/')
    .every((part) => part !== '' && part !== '.' && part !== '..' && !part.includes('\\') && !part.includes('\0'));
}

/**
 * Materializes `<commit>:<subdir>` into `target`.
 *
 * @returns counts and skipped paths; `undefined` when another writer (a process sharing the cache) renamed the same
 *   tree into place first: its tree, the same bytes, is the one at `target`, and it is that writer's.
 * @throws GitSourceError `unknown-subdir` when the subdirectory does not exist at the commit or is not a directory;
 *   `over-limits` naming the limit and the tree's size (nothing is written); `git-failed` when the cache's
 *   repository cannot be read or the disk refuses a write (the partial tree is removed).
 */
export async function materializeTree(options: MaterializeOptions): Promise<MaterializedTree | undefined> {
  const { gitDir, commit, subdir, env } = options;
  const treeish = subdir === '' ? `${commit}^{tree}` : `${commit}:${subdir}`;
  let type: string;
  try {
    type = (
      await runGit(['--git-dir', gitDir, 'cat-file', '-t', '--end-of-options', treeish], { env, timeoutMs: 30_000 })
    )
      .toString('utf8')
      .trim();
  } catch (error) {
    if (error instanceof GitCommandError && subdir !== '') type = 'missing';
    else
      throw error instanceof GitCommandError
        ? new GitSourceError(
            'git-failed',
            `cannot read commit ${commit} of ${options.describe} from the cache: ${error.message}`,
          )
        : error;
  }
  if (type !== 'tree') {
    throw new GitSourceError(
      'unknown-subdir',
      `${options.describe}: ${type === 'missing' ? 'there is no directory' : 'this is a file, not a directory:'} "${subdir}" at commit ${commit}`,
    );
  }
  const listing = parseListing(
    await runGit(['--git-dir', gitDir, 'ls-tree', '-r', '-z', '-l', '--full-tree', '--end-of-options', treeish], {
      env,
      timeoutMs: 120_000,
      maxStdoutBytes: 1024 * 1024 * 1024,
    }),
  );
  const written = listing.filter((entry) => entry.kind !== 'submodule');
  const bytes = written.reduce((sum, entry) => sum + (entry.kind === 'file' ? entry.size : 0), 0);
  if (written.length > options.limits.maxFiles || bytes > options.limits.maxBytes) {
    const which =
      written.length > options.limits.maxFiles
        ? `${written.length} files, over the limit of ${options.limits.maxFiles} (--git-max-files)`
        : `${bytes} bytes, over the limit of ${options.limits.maxBytes} (--git-max-bytes)`;
    throw new GitSourceError(
      'over-limits',
      `${options.describe} at commit ${commit} is not served: its tree holds ${which}`,
    );
  }
  const unsafe = written.find((entry) => !isSafePath(entry.path));
  if (unsafe !== undefined)
    throw new GitSourceError(
      'git-failed',
      `${options.describe} at commit ${commit} holds a path that cannot be written safely: "${unsafe.path}"`,
    );

  await fsp.mkdir(options.tmpDir, { recursive: true });
  const temp = path.join(options.tmpDir, tempTreeName(path.basename(options.target)));
  await fsp.mkdir(temp);
  let outsideLinks: readonly string[];
  try {
    outsideLinks = await writeEntries(temp, written, gitDir, env);
    await fsp.mkdir(path.dirname(options.target), { recursive: true });
    try {
      // rename() replaces an empty directory: a tree of no files (only submodules) is looked for first.
      if (written.length === 0 && (await fsp.stat(options.target).catch(() => undefined)) !== undefined)
        throw Object.assign(new Error('the tree is in place'), { code: 'EEXIST' });
      await fsp.rename(temp, options.target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process materialized the same commit first: its tree is the same bytes, keep it.
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
      await fsp.rm(temp, { recursive: true, force: true });
      return undefined;
    }
  } catch (error) {
    await fsp.rm(temp, { recursive: true, force: true });
    if (error instanceof GitSourceError) throw error;
    throw new GitSourceError(
      'git-failed',
      `cannot write the tree of ${options.describe} at commit ${commit}: ${(error as Error).message}`,
    );
  }
  return {
    dir: options.target,
    files: written.length,
    bytes,
    skipped: [
      ...listing
        .filter((entry) => entry.kind === 'submodule')
        .map((entry) => ({ path: entry.path, reason: 'submodule' as const })),
      ...outsideLinks.map((link) => ({ path: link, reason: 'link-outside-tree' as const })),
    ],
  };
}

/**
 * Writes every entry's blob under `root` through one `git cat-file --batch`. Regular files are created exclusively
 * (`wx`, never through an existing link) with mode 0644; symlinks are created last, so no file is ever written
 * through a link this tree made; then every link that does not resolve inside `root` is removed again
 * ({@link removeEscapingLinks}).
 *
 * @returns the paths of the links removed.
 */
async function writeEntries(
  root: string,
  entries: readonly TreeEntry[],
  gitDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string[]> {
  const directories = new Set<string>();
  for (const entry of entries) {
    const parts = entry.path.split('/');
    for (let depth = 1; depth < parts.length; depth++) directories.add(parts.slice(0, depth).join('/'));
  }
  for (const dir of [...directories].sort()) await fsp.mkdir(path.join(root, ...dir.split('/')));

  const child = spawnGit(['--git-dir', gitDir, 'cat-file', '--batch'], { env, timeoutMs: 30 * 60_000 });
  const reader = new BatchReader(child.stdout);
  const links: { path: string; rel: string; target: string }[] = [];
  const unresolvable: string[] = [];
  // Object ids go in as the output is consumed, so neither pipe fills up.
  const feeding = (async () => {
    for (const entry of entries) {
      if (!child.stdin.write(`${entry.object}\n`)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    }
    child.stdin.end();
  })();
  try {
    for (const entry of entries) {
      const header = await reader.readLine();
      const match = /^([0-9a-f]{40,64}) (\S+) (\d+)$/u.exec(header);
      if (match === null || match[1] !== entry.object || match[2] !== 'blob') {
        throw new GitSourceError(
          'git-failed',
          `unexpected git cat-file answer for ${entry.path}: "${header.slice(0, 100)}"`,
        );
      }
      const size = Number(match[3]);
      const abs = path.join(root, ...entry.path.split('/'));
      if (entry.kind === 'symlink') {
        const chunks: Buffer[] = [];
        await reader.readExact(size, async (chunk) => {
          if (size <= MAX_LINK_BYTES) chunks.push(Buffer.from(chunk));
        });
        const target = Buffer.concat(chunks).toString('utf8');
        // A target no file system would resolve (too long, empty, holding NUL) is a link to nothing: left out and
        // reported like the links that resolve outside the tree, rather than refusing the whole commit.
        if (size > MAX_LINK_BYTES || target === '' || target.includes('\0')) unresolvable.push(entry.path);
        else links.push({ path: abs, rel: entry.path, target });
      } else {
        const handle = await fsp.open(
          abs,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o644,
        );
        try {
          await reader.readExact(size, async (chunk) => {
            await handle.write(chunk);
          });
        } finally {
          await handle.close();
        }
      }
      if ((await reader.readLine()) !== '')
        throw new GitSourceError('git-failed', `git cat-file output is out of step after ${entry.path}`);
    }
    await feeding;
  } catch (error) {
    child.kill();
    throw error;
  }
  const { spawnError } = await child.exited;
  if (spawnError !== undefined) throw gitUnavailable(spawnError);
  for (const link of links) await fsp.symlink(link.target, link.path);
  const removed = new Set([...unresolvable, ...(await removeEscapingLinks(root, links))]);
  return entries.filter((entry) => removed.has(entry.path)).map((entry) => entry.path);
}

/**
 * Removes every link whose real path (the kernel's resolution, through any chain of links) is not inside `root`, or
 * that resolves to nothing (a dangling link's text could name a place outside that appears later), until none is
 * left: `up -> ..`, `/etc`, and chains like `t -> .`, `q -> t/..` that no single link's text gives away.
 *
 * @param root the directory the tree was written to.
 * @param links the links written under it (`rel`: `/`-separated path relative to `root`).
 * @returns the `rel` of each link removed, in listing order.
 */
async function removeEscapingLinks(
  root: string,
  links: readonly { readonly path: string; readonly rel: string }[],
): Promise<string[]> {
  const top = await fsp.realpath(root);
  const removed = new Set<string>();
  // Removing a link can only make the links through it dangle, which the next round removes too.
  for (let changed = true; changed;) {
    changed = false;
    for (const link of links) {
      if (removed.has(link.rel)) continue;
      const real = await fsp.realpath(link.path).catch(() => undefined);
      if (real !== undefined && isPathWithin(real, top)) continue;
      await fsp.unlink(link.path);
      removed.add(link.rel);
      changed = true;
    }
  }
  return links.filter((link) => removed.has(link.rel)).map((link) => link.rel);
}
