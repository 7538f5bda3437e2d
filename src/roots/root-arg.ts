/**
 * Root arguments: every form a root is written in, parsed in one place (docs/ARCHITECTURE.md, "Sources"). A folder is
 * `dir` or `prefix=dir`; a git root is
 *
 *   git+<url>[#[<ref>][:<subdir>]]          npm's `git+` prefix, Docker's `#ref:dir` suffix
 *   github:<owner>/<repo>[#[<ref>][:<subdir>]]   shorthand for git+https://github.com/<owner>/<repo>.git
 *   <prefix>=<either of the above>          mounted under an organizational prefix, like prefix=dir
 *
 * `<ref>` is a branch, a tag, a full ref name (`refs/heads/main`) or a full commit id (40 or 64 hex digits); without
 * it the remote's default branch (`HEAD`) is followed. `<subdir>` is the directory of the repository to serve
 * (default: the whole tree). A ref cannot contain `:`, so the first `:` after `#` starts the subdirectory. Parsing is
 * pure; {@link resolveSources} also checks that each folder is a directory.
 */
import { statSync } from 'node:fs';
import path from 'node:path';

import { SkillsServeError } from '../errors.js';
import type { RootSpec } from '../index/types.js';
import { type GitRemote, parseGitUrl, redactUrls } from './git/url.js';

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
  const prefixText = arg.slice(0, equals);
  const dirText = arg.slice(equals + 1);
  const prefix = prefixText.split('/');
  if (
    dirText === '' ||
    prefix.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\0'))
  ) {
    throw new RangeError(
      `root "${arg}" must be a directory or prefix=directory, with a prefix of non-empty "/"-separated names (e.g. acme/billing=./skills)`,
    );
  }
  return Object.freeze({ dir: path.resolve(cwd, dirText), prefix: Object.freeze(prefix) });
}

/** A git root as given on the command line. */
export interface GitRootSpec {
  readonly remote: GitRemote;
  /** The ref as written; `undefined` for the remote's default branch. Commit ids are lower-cased. */
  readonly ref: string | undefined;
  /** `/`-separated directory inside the repository, `''` for the whole tree. */
  readonly subdir: string;
  /** Organizational prefix segments (`acme=git+…` gives `['acme']`). */
  readonly prefix: readonly string[];
}

/** What one root argument names. */
export type SourceSpec =
  { readonly kind: 'folder'; readonly root: RootSpec } | { readonly kind: 'git'; readonly git: GitRootSpec };

/** Whether a ref is a full commit id (SHA-1 or SHA-256), which names an immutable tree. */
export function isCommitId(ref: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/u.test(ref);
}

/** Whether a root argument (after any `prefix=`) names a git repository rather than a directory. */
function isGitSource(text: string): boolean {
  return text.startsWith('git+') || text.startsWith('github:');
}

/**
 * Parses one root argument: a folder (delegated to `parseRootArg`) or a git root.
 *
 * @param arg the argument as typed.
 * @param cwd directory relative folder paths are resolved against.
 * @returns the source it names.
 * @throws RangeError with a message naming the accepted forms; URL credentials are never repeated in it.
 */
export function parseSourceArg(arg: string, cwd: string): SourceSpec {
  if (isGitSource(arg)) return { kind: 'git', git: parseGitSource(arg, []) };
  const equals = arg.indexOf('=');
  if (equals > 0 && isGitSource(arg.slice(equals + 1)) && !arg.startsWith('/') && !arg.startsWith('.')) {
    const prefixText = arg.slice(0, equals);
    const prefix = prefixText.split('/');
    if (prefix.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\0'))) {
      throw new RangeError(
        `root "${prefixText}=…" must have a prefix of non-empty "/"-separated names (e.g. acme/billing=git+https://host/repo.git)`,
      );
    }
    return { kind: 'git', git: parseGitSource(arg.slice(equals + 1), prefix) };
  }
  return { kind: 'folder', root: parseRootArg(arg, cwd) };
}

/**
 * Resolves root arguments: folders (`dir`, `prefix=dir`) against `cwd`, each checked to be a directory, and git roots
 * (`git+<url>#<ref>:<subdir>`, `github:owner/repo…`, with an optional `prefix=`), checked for form only (they are
 * fetched when the server or command starts).
 *
 * @param args root arguments as typed.
 * @returns the sources, in order.
 * @throws SkillsServeError `ROOT_UNUSABLE` naming the resolved absolute path of the first folder that is missing or
 *   not a directory; `CONFIG_INVALID` for a malformed argument.
 */
export function resolveSources(args: readonly string[], cwd: string): SourceSpec[] {
  return args.map((arg) => {
    let source: SourceSpec;
    try {
      source = parseSourceArg(arg, cwd);
    } catch (error) {
      throw new SkillsServeError('CONFIG_INVALID', (error as Error).message);
    }
    if (source.kind === 'git') return source;
    const { dir } = source.root;
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
    return source;
  });
}

/** GitHub owner (user or organization) names: letters, digits, single hyphens, at most 39 characters. */
const GITHUB_OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/u;
/** GitHub repository names. */
const GITHUB_REPO = /^[A-Za-z0-9._-]{1,100}$/u;

/**
 * Parses `git+<url>#<ref>:<subdir>` or `github:<owner>/<repo>#<ref>:<subdir>`.
 *
 * @param text the source without any `prefix=`.
 * @param prefix the prefix segments already parsed.
 * @throws RangeError for a malformed URL, shorthand, ref or subdirectory.
 */
function parseGitSource(text: string, prefix: readonly string[]): GitRootSpec {
  const hash = text.indexOf('#');
  const base = hash === -1 ? text : text.slice(0, hash);
  const suffix = hash === -1 ? '' : text.slice(hash + 1);
  const colon = suffix.indexOf(':');
  const refText = colon === -1 ? suffix : suffix.slice(0, colon);
  const subdirText = colon === -1 ? '' : suffix.slice(colon + 1);
  let remote: GitRemote;
  if (base.startsWith('github:')) {
    const [owner, repo, ...rest] = base.slice('github:'.length).split('/');
    const name = repo?.replace(/\.git$/u, '');
    if (
      owner === undefined ||
      !GITHUB_OWNER.test(owner) ||
      name === undefined ||
      !GITHUB_REPO.test(name) ||
      name === '.' ||
      name === '..' ||
      rest.length > 0
    ) {
      throw new RangeError(
        `root "${redactUrls(base)}" must be github:owner/repo, optionally followed by #ref, #ref:subdir or #:subdir`,
      );
    }
    remote = parseGitUrl(`https://github.com/${owner}/${name}.git`);
  } else {
    remote = parseGitUrl(base.slice('git+'.length));
  }
  return Object.freeze({
    remote,
    ref: parseRef(refText),
    subdir: parseSubdir(subdirText),
    prefix: Object.freeze([...prefix]),
  });
}

/**
 * Validates a ref: a full commit id, or a name git accepts as a ref (the rules of `git check-ref-format`), which also
 * keeps it from being read as an option (`-…`).
 *
 * @returns the ref (commit ids lower-cased), or `undefined` for `''` (the default branch).
 * @throws RangeError naming the ref and the rule it breaks.
 */
function parseRef(text: string): string | undefined {
  if (text === '') return undefined;
  if (isCommitId(text.toLowerCase())) return text.toLowerCase();
  const broken = /[\0-\x20\x7f~^:?*[\\]/u.test(text)
    ? 'it holds a space, a control character or one of ~ ^ : ? * [ \\'
    : text.startsWith('-')
      ? 'it starts with "-"'
      : text.includes('..')
        ? 'it holds ".."'
        : text.includes('@{') || text === '@'
          ? 'it holds "@{" or is "@"'
          : text.startsWith('/') || text.endsWith('/') || text.includes('//')
            ? 'it has an empty "/"-separated part'
            : text.endsWith('.')
              ? 'it ends with "."'
              : text.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))
                ? 'a part starts with "." or ends with ".lock"'
                : text.length > 255
                  ? 'it is longer than 255 characters'
                  : undefined;
  if (broken !== undefined)
    throw new RangeError(`git ref "${text}" is not a valid branch, tag or commit id: ${broken}`);
  return text;
}

/**
 * Validates the subdirectory to serve: `/`-separated names relative to the repository's top, leading and trailing
 * `/` ignored.
 *
 * @returns the normalized subdirectory, `''` for the whole tree.
 * @throws RangeError for `.`, `..`, empty parts or NUL.
 */
function parseSubdir(text: string): string {
  const trimmed = text.replace(/^\/+|\/+$/gu, '');
  if (trimmed === '') return '';
  const parts = trimmed.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\0'))) {
    throw new RangeError(
      `git subdirectory "${text}" must be "/"-separated names inside the repository (no ".", ".." or empty parts)`,
    );
  }
  return parts.join('/');
}

/**
 * A source as people read it in logs: a folder's absolute path, or `git+<url without credentials>#<ref>:<subdir>`
 * (with the `prefix=` it was given).
 */
export function describeSource(source: SourceSpec): string {
  if (source.kind === 'folder')
    return source.root.prefix.length === 0 ? source.root.dir : `${source.root.prefix.join('/')}=${source.root.dir}`;
  const { remote, ref, subdir, prefix } = source.git;
  const suffix = ref === undefined && subdir === '' ? '' : `#${ref ?? ''}${subdir === '' ? '' : `:${subdir}`}`;
  return `${prefix.length === 0 ? '' : `${prefix.join('/')}=`}git+${remote.display}${suffix}`;
}
