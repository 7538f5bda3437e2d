/**
 * Git remote URLs for git roots (docs/git-roots.md, "Syntax", "Safety"): which URLs are accepted, the credential-free
 * form that may appear in messages, logs and provenance, and the `--git-allow` allowlist. Pure.
 *
 * Accepted: `file:///abs/path`, `http://…`, `https://…`, `ssh://[user@]host[:port]/path`. Refused with a reason:
 * every other scheme (`ext::` runs a command, `git://` is unauthenticated), credentials in an http(s) URL (use
 * `SKILLS_SERVE_GIT_TOKEN` or a git credential helper instead) and a password in an ssh URL.
 */

/** URL schemes a git root may use (the git transport of the same name). */
export const GIT_SCHEMES = ['file', 'http', 'https', 'ssh'] as const;
export type GitScheme = (typeof GIT_SCHEMES)[number];

/** A validated git remote. */
export interface GitRemote {
  /** What git is given: the WHATWG-normalized URL (dot segments resolved), never with credentials. */
  readonly url: string;
  readonly scheme: GitScheme;
  /** Lower-case host name, `''` for `file:`. IPv6 hosts keep their brackets. */
  readonly hostname: string;
  /** Port as written, `''` when none. */
  readonly port: string;
  /** Decoded path segments (`['acme', 'skills.git']`; for `file:`, the directories of the absolute path). */
  readonly segments: readonly string[];
  /** The form for people: the URL without user, password, query or fragment. Safe in messages, logs and `_meta`. */
  readonly display: string;
}

/** Longest accepted URL (characters); longer text is refused rather than echoed. */
const MAX_URL_CHARS = 2048;

/**
 * Validates a git remote URL.
 *
 * @param text the URL as written after `git+` (`https://github.com/acme/skills.git`).
 * @returns the remote.
 * @throws RangeError naming the accepted forms; the message never repeats credentials found in `text`.
 */
export function parseGitUrl(text: string): GitRemote {
  if (text.length > MAX_URL_CHARS) throw new RangeError(`git URL is longer than ${MAX_URL_CHARS} characters`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/u.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined || text.startsWith(`${scheme}::`)) {
    throw new RangeError(
      `git URL ${redactUrls(text)} must start with file://, http://, https:// or ssh:// (ext:: and other transports are not allowed)`,
    );
  }
  if (!(GIT_SCHEMES as readonly string[]).includes(scheme)) {
    throw new RangeError(`git URL scheme "${scheme}:" is not allowed: use file://, http://, https:// or ssh://`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(`git URL ${redactUrls(text)} is not a valid URL`);
  }
  const typed = scheme as GitScheme;
  if (url.username !== '' || url.password !== '') {
    if (typed !== 'ssh' || url.password !== '') {
      throw new RangeError(
        `git URL ${displayOf(url)} holds credentials; remove them and set SKILLS_SERVE_GIT_TOKEN (https) or use a git credential helper or ssh key`,
      );
    }
  }
  if (url.search !== '' || url.hash !== '')
    throw new RangeError(`git URL ${displayOf(url)} must not have a query or fragment`);
  if (typed === 'file') {
    if (url.hostname !== '' && url.hostname !== 'localhost')
      throw new RangeError(`file URL ${displayOf(url)} must name a local path (file:///path)`);
  } else if (url.hostname === '') {
    throw new RangeError(`git URL ${displayOf(url)} has no host`);
  }
  let segments: string[];
  try {
    segments = url.pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    throw new RangeError(`git URL ${displayOf(url)} has a malformed percent-encoding in its path`);
  }
  if (
    segments.length === 0 ||
    segments.some((segment) => segment.includes('/') || segment.includes('\0') || segment === '..' || segment === '.')
  ) {
    throw new RangeError(`git URL ${displayOf(url)} must name a repository path`);
  }
  return Object.freeze({
    url: url.href,
    scheme: typed,
    hostname: url.hostname.toLowerCase(),
    port: url.port,
    segments: Object.freeze(segments),
    display: displayOf(url),
  });
}

/** The URL without password, query and fragment; the user name is kept for ssh only (`git@host`). */
function displayOf(url: URL): string {
  const user = url.protocol === 'ssh:' && url.username !== '' && url.password === '' ? `${url.username}@` : '';
  const credentials = url.password !== '' || (url.username !== '' && user === '') ? '***@' : '';
  return `${url.protocol}//${credentials}${user}${url.host}${url.pathname}`;
}

/**
 * Removes credentials from every URL in a text: `scheme://user:secret@host` becomes `scheme://***@host`. Used on
 * git's own messages before they reach a log or an error.
 *
 * @param text any text.
 * @returns the text with each URL's user information replaced by `***`.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/@'"]*@/gu, '$1***@');
}

/**
 * Replaces each secret (and its base64 forms, as sent in an `Authorization: Basic` header) by `***`, then redacts URL
 * credentials.
 *
 * @param text any text (git's stderr, an error message).
 * @param secrets strings that must never appear (tokens); empty ones are ignored.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Longest first, encoded forms before raw ones, so that no shorter match leaves part of a longer one behind.
  const sorted = secrets.filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  const encoded = sorted.flatMap((secret) => {
    const base64 = Buffer.from(secret).toString('base64');
    return [base64, base64.replace(/=+$/u, '')];
  });
  let out = text;
  for (const form of [...encoded, ...sorted]) out = out.split(form).join('***');
  return redactUrls(out);
}

/** One `--git-allow` entry: a host with an optional path prefix, or a local directory for `file:` URLs. */
export interface GitAllowEntry {
  /** Lower-case host name; `''` for a `file:` entry. */
  readonly hostname: string;
  /** Port the entry is limited to, `''` for any. */
  readonly port: string;
  /** Leading path segments a URL must start with (an org, an org/repo, or a directory). */
  readonly segments: readonly string[];
  /** The entry as written, for messages. */
  readonly text: string;
}

/**
 * Parses one `--git-allow` entry: `host`, `host/org`, `host:port/org/repo`, or `file:///dir` for local repositories
 * under a directory.
 *
 * @throws RangeError naming the accepted forms.
 */
export function parseGitAllow(text: string): GitAllowEntry {
  const trimmed = text.trim();
  const fail = (): never => {
    throw new RangeError(`--git-allow must be host, host/org, host/org/repo or file:///dir (got "${text}")`);
  };
  if (trimmed.startsWith('file://')) {
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      return fail();
    }
    const segments = url.pathname.split('/').filter((segment) => segment !== '');
    if (url.hostname !== '' || url.search !== '' || url.hash !== '') fail();
    return Object.freeze({
      hostname: '',
      port: '',
      segments: Object.freeze(segments.map((segment) => decodeURIComponent(segment))),
      text: trimmed,
    });
  }
  const match = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?((?:\/[^/\s]+)*)\/?$/u.exec(trimmed);
  if (match === null || trimmed.includes('://')) return fail();
  const segments = (match[3] ?? '').split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..')) fail();
  return Object.freeze({
    hostname: (match[1] as string).toLowerCase(),
    port: match[2] ?? '',
    segments: Object.freeze(segments),
    text: trimmed,
  });
}

/** A repository path segment compared without a trailing `.git` (`skills.git` is `skills`). */
const bare = (segment: string): string => segment.replace(/\.git$/u, '');

/**
 * Whether the allowlist admits a remote. An empty allowlist admits every remote. Hosts compare case-insensitively;
 * path segments compare exactly (a forge whose paths are case-sensitive could otherwise be tricked), with a trailing
 * `.git` ignored on the last segment of either side.
 *
 * @param remote a validated remote.
 * @param allow the parsed `--git-allow` entries.
 */
export function isGitRemoteAllowed(remote: GitRemote, allow: readonly GitAllowEntry[]): boolean {
  if (allow.length === 0) return true;
  return allow.some((entry) => {
    if ((entry.hostname === '') !== (remote.scheme === 'file')) return false;
    if (entry.hostname !== remote.hostname) return false;
    if (entry.port !== '' && entry.port !== remote.port) return false;
    if (entry.segments.length > remote.segments.length) return false;
    return entry.segments.every((segment, index) => {
      const theirs = remote.segments[index] as string;
      const lastOfEntry = index === entry.segments.length - 1;
      const lastOfRemote = index === remote.segments.length - 1;
      return segment === theirs || (lastOfEntry && lastOfRemote && bare(segment) === bare(theirs));
    });
  });
}
