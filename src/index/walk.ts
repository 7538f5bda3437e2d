/**
 * Directory walk of one root: which files and directories exist, under the ignore rules and the symlink policy.
 * Filesystem only; no hashing, no parsing (DESIGN §3 `walk.ts`, §5 "Ignored", "Symlinks", "Special files").
 */
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { describeIoError } from './digest.js';
import { IGNORE_FILE, isIgnoredByLayers, isIgnoredName, isInsideRoot, isRepresentableName, parseIgnoreFile, type IgnoreLayer, type SymlinkPolicy } from './policy.js';
import { createSlicer } from './slice.js';
import type { Diagnostic } from './types.js';

/** A directory reached by the walk. */
export interface WalkedDir {
  /** Root-relative path, `/`-separated; `''` for the root itself. */
  readonly rel: string;
  /** Real path on disk (symlinked directories resolved). */
  readonly real: string;
}

/** A file reached by the walk: a regular file, or a symlink to one inside a root. */
export interface WalkedFile {
  /** Root-relative path, `/`-separated. */
  readonly rel: string;
  /** Real path on disk: what reads open. */
  readonly real: string;
}

/** Everything under one directory that may be served. */
export interface WalkResult {
  readonly dirs: WalkedDir[];
  readonly files: WalkedFile[];
  /** One warning per skipped link, special file, unreadable directory or unrepresentable name. */
  readonly diagnostics: Diagnostic[];
}

/** Where a walk starts and what it may follow. */
export interface WalkOptions {
  /** Absolute path of the root as given (used in diagnostics). */
  readonly root: string;
  /** Real paths of every served root: under `within`, symlinks are followed only when their target stays inside one. */
  readonly allowedRealRoots: readonly string[];
  /** `within` (default): follow links whose real path stays inside a root; `skip`: never; `follow`: always. */
  readonly symlinks?: SymlinkPolicy;
}

/** One directory waiting to be listed. */
interface PendingDir {
  readonly rel: string;
  readonly abs: string;
  readonly real: string;
  /** Real paths of the directories above it (a link back up to one of them is a loop). */
  readonly ancestors: ReadonlySet<string>;
  readonly layers: readonly IgnoreLayer[];
}

/**
 * Walks the directory `start` (root-relative; `''` for the whole root), skipping ignored names, special files,
 * unreadable directories and symlinks that leave the roots, dangle or loop. Never throws for problems inside the
 * tree: each becomes one warning diagnostic. Lists directories with synchronous calls (far cheaper than thread-pool
 * round trips for many small directories), yielding to the event loop every `SLICE_MS` (`slice.ts`).
 *
 * @param options the root and the real paths symlinks may resolve into.
 * @param start root-relative directory to walk (`'acme/billing'`), `''` for all of it.
 * @returns directories (including `start`), files and diagnostics, in listing order.
 * @throws Error (with `code`) only when `start` itself cannot be resolved.
 */
export async function walkTree(options: WalkOptions, start = ''): Promise<WalkResult> {
  const result: WalkResult = { dirs: [], files: [], diagnostics: [] };
  const startAbs = start === '' ? options.root : path.join(options.root, ...start.split('/'));
  const { ancestors, layers } = aboveStart(options.root, start, result.diagnostics);
  const startReal = realpathSync(startAbs);
  if (start !== '' && isIgnoredByLayers(layers, start, true)) return result;
  const stack: PendingDir[] = [{ rel: start, abs: startAbs, real: startReal, ancestors, layers }];
  const slice = createSlicer();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    listDir(options, result, next, stack);
    await slice();
  }
  return result;
}

/**
 * What the directories above `start` contribute: their real paths (so a link back up is seen as a loop) and their
 * `.skillsignore` rules (so a partial walk ignores exactly what a full walk does).
 */
function aboveStart(root: string, start: string, diagnostics: Diagnostic[]): { ancestors: Set<string>; layers: IgnoreLayer[] } {
  const ancestors = new Set<string>();
  const layers: IgnoreLayer[] = [];
  if (start === '') return { ancestors, layers };
  const segments = start.split('/');
  for (let depth = 0; depth < segments.length; depth++) {
    const abs = path.join(root, ...segments.slice(0, depth));
    let real = abs;
    try {
      real = realpathSync(abs);
    } catch {
      // keep the unresolved path: the walk of `start` reports what is wrong
    }
    ancestors.add(real);
    const layer = readIgnoreLayer(segments.slice(0, depth).join('/'), abs, real, diagnostics);
    if (layer !== undefined) layers.push(layer);
  }
  return { ancestors, layers };
}

/** Reads `<dir>/.skillsignore` if it exists; an unreadable one is reported and treated as absent. */
function readIgnoreLayer(rel: string, abs: string, real: string, diagnostics: Diagnostic[]): IgnoreLayer | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(real, IGNORE_FILE), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      diagnostics.push(warning('unreadable-ignore-file', path.join(abs, IGNORE_FILE), `${IGNORE_FILE} could not be read (${describeIoError(error)}); its rules are not applied`, 'make it readable'));
    }
    return undefined;
  }
  return { base: rel, matcher: parseIgnoreFile(text) };
}

/** Lists one directory: files go to the result, subdirectories (and followed links to directories) onto the stack. */
function listDir(options: WalkOptions, result: WalkResult, dir: PendingDir, stack: PendingDir[]): void {
  const { rel, abs, real } = dir;
  result.dirs.push({ rel, real });
  let entries: Dirent[];
  try {
    entries = readdirSync(real, { withFileTypes: true });
  } catch (error) {
    result.diagnostics.push(warning('unreadable-directory', abs, `directory could not be listed (${describeIoError(error)})`, 'make the directory readable by the user running skills-serve'));
    return;
  }
  const ancestors = new Set(dir.ancestors).add(real);
  let layers = dir.layers;
  if (entries.some((entry) => entry.name === IGNORE_FILE)) {
    const layer = readIgnoreLayer(rel, abs, real, result.diagnostics);
    if (layer !== undefined) layers = [...layers, layer];
  }
  for (const entry of entries) {
    const name = entry.name;
    if (isIgnoredName(name)) continue;
    // Plain concatenation: `abs` and `real` are already normalized, and path.join costs more than the listing.
    const childAbs = joinName(abs, name);
    if (!isRepresentableName(name)) {
      result.diagnostics.push(warning('unrepresentable-name', childAbs, 'name is not valid UTF-8 and cannot be served as a URI', 'rename it using UTF-8'));
      continue;
    }
    const childRel = rel === '' ? name : `${rel}/${name}`;
    const childReal = joinName(real, name);
    // A link is judged by what it points to; until then, by its own name as a file.
    if (layers.length > 0 && isIgnoredByLayers(layers, childRel, entry.isDirectory())) continue;
    if (entry.isDirectory()) stack.push({ rel: childRel, abs: childAbs, real: childReal, ancestors, layers });
    else if (entry.isFile()) result.files.push({ rel: childRel, real: childReal });
    else if (entry.isSymbolicLink()) followLink(options, result, { rel: childRel, abs: childAbs, real: childReal, ancestors, layers }, stack);
    else result.diagnostics.push(specialFile(childAbs));
  }
}

/** Follows one symlink under the policy: inside a root (for `within`), not dangling, not a loop. */
function followLink(options: WalkOptions, result: WalkResult, link: PendingDir, stack: PendingDir[]): void {
  const { rel, abs, ancestors, layers } = link;
  const policy = options.symlinks ?? 'within';
  if (policy === 'skip') {
    result.diagnostics.push(warning('symlink-skipped', abs, 'symlink was not followed (--symlinks skip)', 'copy the target into the skill, or serve with --symlinks within'));
    return;
  }
  let target: string;
  try {
    target = realpathSync(link.real);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') {
      result.diagnostics.push(warning('symlink-loop', abs, 'symlink loops back on itself and was skipped', 'point the link at a real file or directory, or remove it'));
    } else {
      result.diagnostics.push(warning('symlink-dangling', abs, `symlink target does not exist (${describeIoError(error)}) and was skipped`, 'fix or remove the link'));
    }
    return;
  }
  if (policy === 'within' && !options.allowedRealRoots.some((root) => isInsideRoot(target, root))) {
    result.diagnostics.push(warning('symlink-outside-root', abs, 'symlink points outside the served roots and was not followed', 'copy the target into the skill, serve its folder as another root, or run with --symlinks follow'));
    return;
  }
  let stat;
  try {
    stat = statSync(target);
  } catch (error) {
    result.diagnostics.push(warning('symlink-dangling', abs, `symlink target cannot be read (${describeIoError(error)}) and was skipped`, 'fix or remove the link'));
    return;
  }
  if (stat.isDirectory()) {
    if (layers.length > 0 && isIgnoredByLayers(layers, rel, true)) return;
    if (ancestors.has(target)) {
      result.diagnostics.push(warning('symlink-loop', abs, 'symlink points to a directory that contains it and was not followed', 'link to a sibling directory or copy the files instead'));
      return;
    }
    stack.push({ rel, abs, real: target, ancestors, layers });
  } else if (stat.isFile()) {
    result.files.push({ rel, real: target });
  } else {
    result.diagnostics.push(specialFile(abs));
  }
}

/** `dir` + separator + `name`, for a normalized absolute `dir` (the root `/` included). */
function joinName(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name;
}

function specialFile(abs: string): Diagnostic {
  return warning('special-file', abs, 'not a regular file (FIFO, socket or device) and was skipped', 'skills may only contain regular files and directories');
}

/**
 * A warning diagnostic (one file or link skipped; the skill is still served).
 *
 * @param rule stable rule id; @param file absolute host path; @param message what is wrong; @param hint how to fix it.
 */
export function warning(rule: string, file: string, message: string, hint: string): Diagnostic {
  return { severity: 'warning', rule, file, message, hint };
}
