/**
 * `--http-tokens FILE`: bearer tokens, each with the skill-path prefixes its holder may see (docs/http.md,
 * "Per-team visibility"; docs/ARCHITECTURE.md, "Transports"). The file is JSON:
 *
 *   { "tokens": [ { "name": "billing", "token": "…", "prefixes": ["acme/billing", "shared"] },
 *                 { "name": "ops", "token": "…", "prefixes": ["*"] } ] }
 *
 * `"*"` sees everything. Tokens are compared in constant time (their SHA-256 digests, so neither content nor length
 * leaks through timing); names appear in logs, tokens never. The file is read again when it changes; a file that no
 * longer parses keeps the previous tokens, with a warning.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';

import type { Visibility } from '../server/visibility.js';

/** One token's entry, resolved. */
interface TokenEntry {
  readonly digest: Buffer;
  readonly view: Visibility;
}

/** How often the file is checked for changes (ms). */
export const TOKENS_CHECK_MS = 1000;

/**
 * Parses the tokens file's text.
 *
 * @returns one entry per token.
 * @throws Error naming what is wrong (a token's value is never repeated in the message).
 */
function parseTokensFile(text: string): TokenEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('not JSON'); // the parser's message may quote the text, tokens included
  }
  const tokens = (parsed as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(tokens) || tokens.length === 0)
    throw new Error('expected { "tokens": [ { "name", "token", "prefixes" }, … ] } with at least one token');
  const seen = new Set<string>();
  return tokens.map((item: unknown, index) => {
    const { name, token, prefixes } = (item ?? {}) as { name?: unknown; token?: unknown; prefixes?: unknown };
    const label = typeof name === 'string' && name !== '' ? name : `tokens[${index}]`;
    if (typeof name !== 'string' || name === '') throw new Error(`tokens[${index}]: "name" must be a non-empty string`);
    if (typeof token !== 'string' || token.length < 16)
      throw new Error(`${label}: "token" must be a string of at least 16 characters`);
    if (seen.has(token)) throw new Error(`${label}: the same token is listed twice`);
    seen.add(token);
    const segments = parsePrefixes(label, prefixes);
    return {
      digest: tokenDigest(token),
      view: Object.freeze({ name, prefixes: Object.freeze(segments.map((prefix) => Object.freeze(prefix))) }),
    };
  });
}

/**
 * Parses an entry's `prefixes` (the tokens file and the `--auth-claims` file share it): skill-path prefixes, `"*"` for
 * every skill.
 *
 * @param label the entry's name, for the message.
 * @returns each prefix as its path segments (`[]` for `"*"`).
 * @throws Error naming the entry when `prefixes` is not a non-empty list of non-empty strings, or a prefix is only
 *   slashes.
 */
export function parsePrefixes(label: string, prefixes: unknown): string[][] {
  if (
    !Array.isArray(prefixes) ||
    prefixes.length === 0 ||
    !prefixes.every((prefix) => typeof prefix === 'string' && prefix !== '')
  )
    throw new Error(`${label}: "prefixes" must be a non-empty list of skill-path prefixes (or "*")`);
  const segments = (prefixes as string[]).map((prefix) =>
    prefix === '*' ? [] : prefix.split('/').filter((segment) => segment !== ''),
  );
  if (segments.some((prefix, at) => prefix.length === 0 && (prefixes as string[])[at] !== '*'))
    throw new Error(`${label}: a prefix is empty`);
  return segments;
}

/** The SHA-256 of a bearer token: what tokens are compared by, in constant time and at a fixed length. */
export function tokenDigest(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** The tokens of a file, kept current. */
export class HttpTokens {
  readonly #file: string;
  readonly #warn: (message: string) => void;
  readonly #reloaded: (views: ReadonlySet<Visibility>) => void;
  #entries: TokenEntry[];

  /**
   * Reads `file` and starts following it.
   *
   * @param warn told when a changed file cannot be used (the previous tokens stay).
   * @param reloaded told after a change was taken, with every view now in force: a token whose name and prefixes did
   *   not change keeps its view object, so what is kept per view (handlers, page caches) survives the reload and
   *   whatever was kept for a view not in the set belongs to a removed or changed token.
   * @throws Error when the file cannot be read or parsed at start (the CLI exits 2 with the message).
   */
  constructor(
    file: string,
    warn: (message: string) => void,
    reloaded: (views: ReadonlySet<Visibility>) => void = () => undefined,
  ) {
    this.#file = file;
    this.#warn = warn;
    this.#reloaded = reloaded;
    this.#entries = parseTokensFile(readFileSync(file, 'utf8'));
    watchFile(file, { interval: TOKENS_CHECK_MS, persistent: false }, () => this.#reload());
  }

  /**
   * The view of the client presenting `token` (compared in constant time with every known token).
   *
   * @returns the view, or `undefined` for an unknown token.
   */
  viewOf(token: string): Visibility | undefined {
    const digest = tokenDigest(token);
    let found: Visibility | undefined;
    for (const entry of this.#entries) if (timingSafeEqual(digest, entry.digest)) found = entry.view;
    return found;
  }

  /** Stops following the file. */
  close(): void {
    unwatchFile(this.#file);
  }

  #reload(): void {
    try {
      statSync(this.#file);
      const parsed = parseTokensFile(readFileSync(this.#file, 'utf8'));
      const previous = new Map(this.#entries.map((entry) => [viewKey(entry), entry.view]));
      this.#entries = parsed.map((entry) => ({ ...entry, view: previous.get(viewKey(entry)) ?? entry.view }));
    } catch (error) {
      this.#warn(`${this.#file} could not be used (${(error as Error).message}); the previous tokens stay in force`);
      return;
    }
    this.#reloaded(new Set(this.#entries.map((entry) => entry.view)));
  }
}

/** One token's view as a key: its digest, name and prefixes (a changed token gets a new view). */
function viewKey({ digest, view }: TokenEntry): string {
  return JSON.stringify([digest.toString('hex'), view.name, view.prefixes]);
}
