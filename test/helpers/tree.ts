/**
 * Real temporary directory trees for integration tests (no fs mocks).
 *
 * `makeTree` builds a tree from a flat spec of relative paths; `copyFixture` copies a committed fixture byte for
 * byte; `tempTrees` removes the trees a test made. What a tree should publish is `disk.ts`.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll } from 'vitest';

/** One entry of a {@link makeTree} spec: file contents, a symlink, a FIFO, or an (empty) directory. */
export type TreeEntry = string | Uint8Array | { symlink: string } | { fifo: true } | { dir: true };

/** Absolute path of `test/fixtures`. */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Absolute path of the repository's `sample-skills`. */
export const SAMPLE_SKILLS_DIR = fileURLToPath(new URL('../../sample-skills/', import.meta.url));

const TEMP_PREFIX = 'skills-serve-test-';

/** Every temp directory this test file made, removed after its last test (a test may remove its own sooner). */
const madeTempDirs: string[] = [];
afterAll(async () => {
  for (const dir of madeTempDirs.splice(0)) {
    // A test that locked a folder (chmod 000) unlocks it itself; whatever still cannot be removed is left to the OS.
    await fsp.rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
});

/**
 * A fresh empty temp directory under `os.tmpdir()`, as its real path (macOS `/var` → `/private/var`); removed after
 * the test file's last test.
 */
export async function makeTempDir(): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), TEMP_PREFIX)));
  madeTempDirs.push(dir);
  return dir;
}

/**
 * Creates a fresh temp directory holding `spec`.
 *
 * @param spec relative `/`-separated paths → contents (string as UTF-8, bytes verbatim), `{ symlink: target }`
 *   (target written as given, relative or absolute), `{ fifo: true }` (via `mkfifo`), or `{ dir: true }`.
 *   Parent directories are created as needed. Entries are created in key order.
 * @returns the absolute (real) path of the new directory.
 */
export async function makeTree(spec: Record<string, TreeEntry>): Promise<string> {
  const root = await makeTempDir();
  await addToTree(root, spec);
  return root;
}

/** Adds `spec` (same shape as {@link makeTree}) to the existing directory `root`. */
export async function addToTree(root: string, spec: Record<string, TreeEntry>): Promise<void> {
  for (const [rel, entry] of Object.entries(spec)) {
    const abs = path.join(root, ...rel.split('/'));
    await fsp.mkdir(path.dirname(abs), { recursive: true });
    if (typeof entry === 'string' || entry instanceof Uint8Array) await fsp.writeFile(abs, entry);
    else if ('symlink' in entry) await fsp.symlink(entry.symlink, abs);
    else if ('fifo' in entry) execFileSync('mkfifo', [abs]);
    else await fsp.mkdir(abs, { recursive: true });
  }
}

/**
 * Copies `test/fixtures/<name>` into a fresh temp directory (recursive, bytes preserved).
 *
 * @returns the absolute (real) path of the copy, whose contents are those of the fixture folder.
 */
export async function copyFixture(name: string): Promise<string> {
  const root = await makeTempDir();
  await fsp.cp(path.join(FIXTURES_DIR, name), root, { recursive: true, verbatimSymlinks: true });
  return root;
}

/** Removes a tree made by {@link makeTree} or {@link copyFixture} (no error if already gone). */
export async function removeTree(dir: string): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
}

/** Temp directories that a test file makes and removes together; see {@link tempTrees}. */
export interface TempTrees {
  /** {@link makeTree}, removed at the next {@link TempTrees.removeAll}. */
  tree(this: void, spec: Record<string, TreeEntry>): Promise<string>;
  /** {@link makeTempDir}, removed at the next {@link TempTrees.removeAll}. */
  tempDir(this: void): Promise<string>;
  /** Removes every directory made so far (no error for one already gone). */
  removeAll(this: void): Promise<void>;
}

/**
 * Temp trees with cleanup, for the trees a test makes as it goes: `tree()` and `tempDir()` remember what they make,
 * and `removeAll()` (called from `afterEach` or `afterAll`, after closing any server using the trees) removes it.
 * The methods need no `this`, so they may be destructured: `const { tree, tempDir } = temps`.
 */
export function tempTrees(): TempTrees {
  const made: string[] = [];
  const track = (dir: string): string => {
    made.push(dir);
    return dir;
  };
  return {
    tree: async (spec) => track(await makeTree(spec)),
    tempDir: async () => track(await makeTempDir()),
    removeAll: async () => {
      await Promise.all(made.splice(0).map(removeTree));
    },
  };
}

/** A valid `SKILL.md`: frontmatter with `name` and `description` (plus `extra` frontmatter lines), then a body. */
export function skillMd(name: string, description: string, extra = ''): string {
  const extraLines = extra === '' || extra.endsWith('\n') ? extra : `${extra}\n`;
  return `---\nname: ${name}\ndescription: ${description}\n${extraLines}---\n\n# ${name}\n\nTest skill.\n`;
}

/**
 * A catalog of `count` generated skills, the size of github/awesome-copilot at 400: `SKILL.md` only, named
 * `<topic>-helper-<NNN>`, with a folded multi-line description on every third. The tree `npm run test:hosts` and
 * `check --hosts`' tests run on.
 *
 * @returns the tree as `path → SKILL.md text`.
 */
export function catalogTree(count: number): Record<string, string> {
  const topics = ['terraform', 'kubernetes', 'react', 'postgres', 'graphql', 'docker', 'python', 'rust', 'security'];
  topics.push('testing');
  const tree: Record<string, string> = {};
  for (let index = 0; index < count; index++) {
    const topic = topics[index % topics.length] as string;
    const name = `${topic}-helper-${String(index).padStart(3, '0')}`;
    const description =
      index % 3 === 0
        ? `>-\n  Reviews, writes and fixes ${topic} code, task ${index}.\n  Use when the user mentions ${topic}.`
        : `Reviews, writes and fixes ${topic} code, task ${index}. Use when the user mentions ${topic}.`;
    tree[`${name}/SKILL.md`] =
      `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${topic} helper ${index}\n\n## Checklist\n`;
  }
  return tree;
}
