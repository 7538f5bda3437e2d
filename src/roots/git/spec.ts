/**
 * Git root arguments (docs/git-roots.md, "Syntax"):
 *
 *   git+<url>[#[<ref>][:<subdir>]]          npm's `git+` prefix, Docker's `#ref:dir` suffix
 *   github:<owner>/<repo>[#[<ref>][:<subdir>]]   shorthand for git+https://github.com/<owner>/<repo>.git
 *   <prefix>=<either of the above>          mounted under an organizational prefix, like prefix=dir
 *
 * `<ref>` is a branch, a tag, a full ref name (`refs/heads/main`) or a full commit id (40 or 64 hex digits); without
 * it the remote's default branch (`HEAD`) is followed. `<subdir>` is the directory of the repository to serve
 * (default: the whole tree). A ref cannot contain `:`, so the first `:` after `#` starts the subdirectory. Pure.
 */
import { splitPrefixed } from '../kind.js';
import { type GitRemote, parseGitUrl, redactUrls } from './url.js';

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

/** Whether a ref is a full commit id (SHA-1 or SHA-256), which names an immutable tree. */
export function isCommitId(ref: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/u.test(ref);
}

/** Whether a root argument (after any `prefix=`) names a git repository rather than a directory. */
function isGitSource(text: string): boolean {
  return text.startsWith('git+') || text.startsWith('github:');
}

/**
 * Parses a git root argument, `prefix=` included.
 *
 * @returns the spec, or `undefined` when the argument is not a git root (a folder).
 * @throws RangeError for a malformed prefix, URL, shorthand, ref or subdirectory; URL credentials are never repeated.
 */
export function parseGitRootArg(arg: string): GitRootSpec | undefined {
  const split = splitPrefixed(arg, isGitSource, 'git+https://host/repo.git');
  return split === undefined ? undefined : parseGitSource(split.text, split.prefix);
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

/** A git root as people read it in logs: `[<prefix>=]git+<url without credentials>[#<ref>][:<subdir>]`. */
export function describeGitRoot(spec: GitRootSpec): string {
  const { remote, ref, subdir, prefix } = spec;
  const suffix = ref === undefined && subdir === '' ? '' : `#${ref ?? ''}${subdir === '' ? '' : `:${subdir}`}`;
  return `${prefix.length === 0 ? '' : `${prefix.join('/')}=`}git+${remote.display}${suffix}`;
}
