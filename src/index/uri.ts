/**
 * `skill://` URIs: building them from skill-path and file-path segments, and parsing what clients send.
 *
 * Implements SEP-2640 "URIs": `skill://<skill-path>/<file-path>`, `/` between segments, each segment
 * percent-encoded so that the URI is already in WHATWG canonical form (`new URL(uri).href === uri`) and
 * therefore reads back whatever a client's URL library does to it. The first segment is the URI authority.
 * (The one exception, names `.` and `..`, cannot occur: directory listings never return them.)
 */

export const SKILL_SCHEME = 'skill://';

/**
 * Longest URI a client may send; longer ones are rejected before any parsing (UTF-16 code units). Large enough for
 * any path the index can serve: PATH_MAX (4096 bytes) at up to 3 URI characters per byte, plus the scheme.
 */
export const MAX_URI_LENGTH = 16_384;

/** Characters kept literally inside a path segment; everything else is percent-encoded as UTF-8. */
const ENCODED_IN_SEGMENT = /[^\w!$&'()*+,.:;=@[\]|~-]/gu;

/**
 * Percent-encodes one path segment (a file or directory name).
 *
 * @param segment a decoded name; never empty. `.`/`..` are encoded as `%2E`/`%2E%2E` so they stay names.
 * @returns the encoded segment.
 * @throws URIError when `segment` holds a lone surrogate (cannot happen for names read from disk).
 */
export function encodeSegment(segment: string): string {
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return segment.replace(ENCODED_IN_SEGMENT, (char) => encodeURIComponent(char));
}

/** Percent-encodes the authority segment strictly (`encodeURIComponent`), as an opaque host must be. */
function encodeAuthority(segment: string): string {
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return encodeURIComponent(segment);
}

/**
 * Builds the canonical URI of a directory or file from decoded segments.
 *
 * @param segments skill-path segments followed by file-path segments, decoded (`['acme', 'refunds', 'SKILL.md']`); at
 *   least one.
 * @returns `skill://acme/refunds/SKILL.md`.
 * @throws RangeError when `segments` is empty.
 */
export function buildSkillUri(segments: readonly string[]): string {
  const [authority, ...path] = segments;
  if (authority === undefined) throw new RangeError('a skill URI needs at least one segment');
  let uri = SKILL_SCHEME + encodeAuthority(authority);
  for (const segment of path) uri += `/${encodeSegment(segment)}`;
  return uri;
}

const ESCAPES_ONLY = /^(?:[^%]|%[\dA-Fa-f]{2})*$/u;
/**
 * Characters a URI never holds unescaped (RFC 3986): controls, space, and the backslash that some parsers turn into
 * `/`.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this matches
const RAW_FORBIDDEN = /[\u0000-\u0020\u007F\\]/u;

/**
 * Parses a `skill://` URI sent by a client into decoded segments, without touching the filesystem.
 * Every spelling of a URI the server advertises (`~` or `%7E`, `&` or `%26`) parses to the same segments.
 *
 * @param uri what the client sent.
 * @returns decoded segments (`['acme', 'refunds', 'SKILL.md']`), or `undefined` when the URI is not a well-formed
 *   skill URI: another scheme, too long, a raw control character, space or backslash, a query or fragment, a
 *   malformed escape, or a segment that is empty,
 *   `.`, `..`, or decodes to something holding `/`, NUL or a lone surrogate.
 */
export function parseSkillUri(uri: string): string[] | undefined {
  if (
    typeof uri !== 'string' ||
    uri.length > MAX_URI_LENGTH ||
    !uri.startsWith(SKILL_SCHEME) ||
    RAW_FORBIDDEN.test(uri)
  )
    return undefined;
  const rest = uri.slice(SKILL_SCHEME.length);
  if (rest === '' || rest.includes('?') || rest.includes('#')) return undefined;
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    if (!ESCAPES_ONLY.test(raw)) return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (
      decoded === '' ||
      decoded === '.' ||
      decoded === '..' ||
      decoded.includes('/') ||
      decoded.includes('\0') ||
      !decoded.isWellFormed()
    ) {
      return undefined;
    }
    segments.push(decoded);
  }
  return segments;
}

/**
 * The canonical spelling of a client-sent skill URI, the key under which the index stores it.
 *
 * @returns the canonical URI, or `undefined` when {@link parseSkillUri} rejects it.
 */
export function canonicalSkillUri(uri: string): string | undefined {
  const segments = parseSkillUri(uri);
  return segments === undefined ? undefined : buildSkillUri(segments);
}

/**
 * Code-unit order of two URIs: the one order of entries, directory children and cursors.
 *
 * @returns negative, zero or positive like `Array.prototype.sort` expects.
 */
export function compareUris(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

/**
 * Percent-decodes text (RFC 3986 §2.1), as UTF-8.
 *
 * @returns the decoded text, or `undefined` when it holds a malformed escape or invalid UTF-8.
 */
export function decodePercent(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
