/**
 * Every option parser of the command line: text as typed → a checked value, or a `RangeError` whose message names
 * the flag and what it accepts (`main.ts` turns it into commander's invalid-argument error, exit 2). Pure.
 */
import { DEFAULT_HTTP_HOST, type HttpEndpoint } from '../config.js';
import { isLoopbackHost } from '../loopback.js';

/**
 * Parses an integer option value.
 *
 * @param text the value as typed.
 * @param flag the option name for the message (`--page-size`).
 * @param min smallest accepted value.
 * @param max largest accepted value.
 * @returns the integer.
 * @throws RangeError naming the flag and the accepted range.
 */
export function parseIntegerOption(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/u.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${flag} must be an integer from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

/** Largest accepted `--page-size`. */
export const MAX_PAGE_SIZE = 10_000;

/** Parses `--page-size`: 1…{@link MAX_PAGE_SIZE} entries. @throws RangeError otherwise. */
export const parsePageSize = (text: string): number => parseIntegerOption(text, '--page-size', 1, MAX_PAGE_SIZE);

/** Largest `--ttl` (ms): one day. */
export const MAX_TTL_MS = 86_400_000;

/** Parses `--ttl`: 0…{@link MAX_TTL_MS} ms. @throws RangeError otherwise. */
export const parseTtlMs = (text: string): number => parseIntegerOption(text, '--ttl', 0, MAX_TTL_MS);

/** Smallest accepted `--catalog-max`: room for what `read_skill` does and a few catalog lines. */
export const MIN_CATALOG_MAX = 1024;
/** Largest accepted `--catalog-max`. */
export const MAX_CATALOG_MAX = 1_000_000;

/**
 * Parses `--catalog-max`: {@link MIN_CATALOG_MAX}…{@link MAX_CATALOG_MAX} characters.
 * @throws RangeError otherwise.
 */
export const parseCatalogMax = (text: string): number =>
  parseIntegerOption(text, '--catalog-max', MIN_CATALOG_MAX, MAX_CATALOG_MAX);

/**
 * Parses the deprecated `--instructions-max`, which `--catalog-max` replaced: the values it took in the release that
 * had it (the same as `--catalog-max`'s). @throws RangeError otherwise.
 */
export const parseInstructionsMax = (text: string): number =>
  parseIntegerOption(text, '--instructions-max', MIN_CATALOG_MAX, MAX_CATALOG_MAX);

/** Largest `--instructions-wait` the release that had it accepted (ms). */
export const MAX_INSTRUCTIONS_WAIT_MS = 30_000;

/**
 * Parses the deprecated `--instructions-wait` (it does nothing now: instructions no longer wait for the index): the
 * values it took in the release that had it, 0…{@link MAX_INSTRUCTIONS_WAIT_MS} ms. @throws RangeError otherwise.
 */
export const parseInstructionsWait = (text: string): number =>
  parseIntegerOption(text, '--instructions-wait', 0, MAX_INSTRUCTIONS_WAIT_MS);

/** Parses `--poll`: 50…60000 ms. @throws RangeError otherwise. */
export const parsePollMs = (text: string): number => parseIntegerOption(text, '--poll', 50, 60_000);

/** Shortest accepted `--git-poll` (ms). */
export const MIN_GIT_POLL_MS = 1000;
/** Longest accepted `--git-poll` (ms): one day. */
export const MAX_GIT_POLL_MS = 86_400_000;

/** Parses `--git-poll`: {@link MIN_GIT_POLL_MS}…{@link MAX_GIT_POLL_MS} ms. @throws RangeError otherwise. */
export const parseGitPollMs = (text: string): number =>
  parseIntegerOption(text, '--git-poll', MIN_GIT_POLL_MS, MAX_GIT_POLL_MS);

/** Parses `--git-max-files`: 1…10,000,000. @throws RangeError otherwise. */
export const parseGitMaxFiles = (text: string): number => parseIntegerOption(text, '--git-max-files', 1, 10_000_000);

/**
 * Checks the text of an allowed signers file (`--git-allowed-signers`, git's `gpg.ssh.allowedSignersFile` format:
 * `principals [options] keytype base64-key` per line, `#` comments): it must list at least one signer. Lines are
 * otherwise left to `ssh-keygen`, which reads the file at each verification.
 *
 * @param text the file's content.
 * @param file the path, for the message.
 * @returns how many signer lines it holds.
 * @throws RangeError naming the file when it holds none.
 */
export function checkAllowedSigners(text: string, file: string): number {
  const signers = text.split(/\r?\n/u).filter((line) => line.trim() !== '' && !line.trim().startsWith('#')).length;
  if (signers === 0)
    throw new RangeError(`--git-allowed-signers ${file} lists no signer (one "principals keytype key" line each)`);
  return signers;
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Parses a byte size: an integer with an optional binary unit (`1048576`, `512MiB`, `2G`; `k`/`m`/`g` are powers of
 * 1024).
 *
 * @param text the value as typed.
 * @param flag the option name for the message.
 * @returns bytes, 1…2^53-1.
 * @throws RangeError naming the flag and the accepted forms.
 */
export function parseByteSize(text: string, flag: string): number {
  const match = /^(\d+)\s*([A-Za-z]*)$/u.exec(text.trim());
  const unit = UNITS[(match?.[2] ?? '').toLowerCase()];
  const value = match === null || unit === undefined ? Number.NaN : Number(match[1]) * unit;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${flag} must be a size in bytes, optionally with K, M or G (got "${text}")`);
  return value;
}

/**
 * Parses `--http`: `port`, `host:port`, `[ipv6]:port` or `:port`.
 *
 * @returns host (default {@link DEFAULT_HTTP_HOST}, IPv6 without brackets) and port 0-65535.
 * @throws RangeError naming the accepted forms.
 */
export function parseHttpEndpoint(text: string): HttpEndpoint {
  const match = /^(?:(\[[\da-fA-F:.]+\]|[^:[\]]+)?:)?(\d{1,5})$/u.exec(text.trim());
  const port = Number(match?.[2]);
  if (match === null || port > 65_535)
    throw new RangeError(`--http must be port, host:port or [ipv6]:port with a port from 0 to 65535 (got "${text}")`);
  const host = match[1] === undefined || match[1] === '' ? DEFAULT_HTTP_HOST : match[1].replace(/^\[(.*)\]$/u, '$1');
  return { host, port };
}

/**
 * Parses one `--auth-issuer`: an issuer identifier (RFC 8414 §2): an `https:` URL without query or fragment
 * (`http:` only on a loopback host, for tests and local providers).
 *
 * @returns the identifier exactly as given (tokens' `iss` must equal it).
 * @throws RangeError naming the flag and what it accepts.
 */
export function parseAuthIssuer(text: string): string {
  const trimmed = text.trim();
  const url = URL.canParse(trimmed) ? new URL(trimmed) : undefined;
  if (url !== undefined && (url.username !== '' || url.password !== ''))
    throw new RangeError('--auth-issuer must not hold credentials (user:password@): an issuer identifier has none');
  if (
    url === undefined ||
    url.search !== '' ||
    url.hash !== '' ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)))
  )
    throw new RangeError(
      `--auth-issuer must be an https:// URL without query or fragment (http:// only on localhost) (got "${text}")`,
    );
  return trimmed;
}

/**
 * Parses `--auth-audience`: the resource identifier tokens must be issued for (RFC 8707 §2, RFC 9728 §1.2): an
 * absolute `http(s):` URL without a fragment.
 *
 * @throws RangeError naming the flag.
 */
export function parseAuthAudience(text: string): string {
  const trimmed = text.trim();
  const url = URL.canParse(trimmed) ? new URL(trimmed) : undefined;
  if (url === undefined || url.hash !== '' || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new RangeError(`--auth-audience must be an absolute http(s) URL without a fragment (got "${text}")`);
  return trimmed;
}

/**
 * Parses `--auth-scopes`: scope tokens (RFC 6749 §3.3) separated by spaces or commas.
 *
 * @returns the scopes, deduplicated, in the order given.
 * @throws RangeError when there is none or one holds a character scopes may not.
 */
export function parseAuthScopes(text: string): string[] {
  const scopes = [...new Set(text.split(/[\s,]+/u).filter((scope) => scope !== ''))];
  if (scopes.length === 0 || !scopes.every((scope) => /^[\x21\x23-\x5B\x5D-\x7E]+$/u.test(scope)))
    throw new RangeError(`--auth-scopes must be one or more scope names separated by spaces or commas (got "${text}")`);
  return scopes;
}
