/**
 * The static tokens of `--http`, two {@link Authorizer}s of the gate: `--http-token` (one token, sees everything) and
 * `--http-tokens FILE`: bearer tokens, each with the skill-path prefixes its holder may see (docs/http.md, "Per-team
 * visibility"; docs/ARCHITECTURE.md, "Authorization"). The file is JSON:
 *
 *   { "tokens": [ { "name": "billing", "token": "…", "prefixes": ["acme/billing", "shared"] },
 *                 { "name": "ops", "token": "…", "prefixes": ["*"], "withholdExecutables": true } ] }
 *
 * `"*"` sees everything; `"withholdExecutables": true` withholds the skills that bundle executable content from that
 * token (`server/visibility.ts`). Tokens are compared in constant time (their SHA-256 digests, so neither content
 * nor length leaks through timing); names appear in logs, tokens never. The file is read again when it changes; a
 * file that no longer parses keeps the previous tokens, with a warning.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';

import type { Visibility } from '../server/visibility.js';
import { isBearerToken } from './auth/challenge.js';
import { type Admitted, type Authorizer, feedKeyOf } from './auth/gate.js';

/** One token's entry, resolved. */
interface TokenEntry {
  readonly digest: Buffer;
  /** The SHA-256 of the token's feed key. */
  readonly feedDigest: Buffer;
  readonly view: Visibility;
  /** Whether the token is outside the bearer grammar (accepted as `Bearer <token>`, deprecated). */
  readonly outsideGrammar: boolean;
}

/** The deprecation warning of a configured token the bearer grammar cannot read (said once, at start or reload). */
export function outsideGrammarWarning(what: string): string {
  return `${what} holds characters a bearer token may not (RFC 6750 §2.1 allows A-Z a-z 0-9 - . _ ~ + / and trailing =): it is still accepted as "Authorization: Bearer <token>", exactly, but is deprecated and will be refused in 0.3; use a token such as the output of "openssl rand -base64 32"`;
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
    const { name, token, prefixes, withholdExecutables } = (item ?? {}) as {
      name?: unknown;
      token?: unknown;
      prefixes?: unknown;
      withholdExecutables?: unknown;
    };
    const label = typeof name === 'string' && name !== '' ? name : `tokens[${index}]`;
    if (typeof name !== 'string' || name === '') throw new Error(`tokens[${index}]: "name" must be a non-empty string`);
    if (typeof token !== 'string' || token.length < 16)
      throw new Error(`${label}: "token" must be a string of at least 16 characters`);
    if (seen.has(token)) throw new Error(`${label}: the same token is listed twice`);
    seen.add(token);
    const segments = parsePrefixes(label, prefixes);
    if (withholdExecutables !== undefined && typeof withholdExecutables !== 'boolean')
      throw new Error(`${label}: "withholdExecutables" must be true or false`);
    return {
      digest: tokenDigest(token),
      feedDigest: tokenDigest(feedKeyOf(token)),
      outsideGrammar: !isBearerToken(token),
      view: Object.freeze({
        name,
        prefixes: Object.freeze(segments.map((prefix) => Object.freeze(prefix))),
        ...(withholdExecutables === true ? { withholdExecutables } : {}),
      }),
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

/** `--http-token`: one token that sees everything. */
export class StaticToken implements Authorizer {
  readonly failures = [] as const;
  readonly scoped = false;
  readonly outsideGrammar: boolean;
  readonly #digest: Buffer;
  readonly #feedDigest: Buffer;

  /**
   * @param token the configured token.
   * @param warn told once, now, when the token is outside the bearer grammar (deprecated).
   */
  constructor(token: string, warn: (message: string) => void) {
    this.#digest = tokenDigest(token);
    this.#feedDigest = tokenDigest(feedKeyOf(token));
    this.outsideGrammar = !isBearerToken(token);
    if (this.outsideGrammar) warn(outsideGrammarWarning('--http-token'));
  }

  /** Admits the configured token (compared in constant time, by digest); any other is not its own. */
  admit(token: string): Admitted | undefined {
    return timingSafeEqual(tokenDigest(token), this.#digest) ? EVERYTHING : undefined;
  }

  /** Admits the token's feed key (compared in constant time, by digest). */
  admitFeedKey(key: string): Admitted | undefined {
    return timingSafeEqual(tokenDigest(key), this.#feedDigest) ? EVERYTHING : undefined;
  }

  /** Never reused: comparing the token costs as little as comparing the header. */
  reusableUntil(): number {
    return 0;
  }
}

const EVERYTHING: Admitted = Object.freeze({ ok: true, view: undefined, subject: undefined, expiresAt: Infinity });

/** The tokens of a file, kept current. */
export class HttpTokens implements Authorizer {
  readonly failures = [] as const;
  readonly scoped = true;
  readonly #file: string;
  readonly #warn: (message: string) => void;
  readonly #reloaded: (views: ReadonlySet<Visibility>) => void;
  readonly #deprecated: (message: string) => void;
  #entries: TokenEntry[];

  /**
   * Reads `file` and starts following it.
   *
   * @param told.unusable a changed file cannot be used (the previous tokens stay);
   * @param told.reloaded a change was taken, with every view now in force: a token whose name and prefixes did not
   *   change keeps its view object, so what is kept per view (handlers, page caches) survives the reload and
   *   whatever was kept for a view not in the set belongs to a removed or changed token;
   * @param told.deprecated a reading holds tokens outside the bearer grammar (the message names their entries).
   * @throws Error when the file cannot be read or parsed at start (the CLI exits 2 with the message).
   */
  constructor(
    file: string,
    told: {
      readonly unusable: (message: string) => void;
      readonly reloaded?: (views: ReadonlySet<Visibility>) => void;
      readonly deprecated: (message: string) => void;
    },
  ) {
    this.#file = file;
    this.#warn = told.unusable;
    this.#reloaded = told.reloaded ?? (() => undefined);
    this.#deprecated = told.deprecated;
    this.#entries = parseTokensFile(readFileSync(file, 'utf8'));
    this.#warnOutsideGrammar();
    watchFile(file, { interval: TOKENS_CHECK_MS, persistent: false }, () => this.#reload());
  }

  /** Every token's view, in the file's order (what a prefix review reads: `unmatchedPrefixes`). */
  get views(): readonly Visibility[] {
    return this.#entries.map((entry) => entry.view);
  }

  /** Whether a token of the file is outside the bearer grammar (deprecated). */
  get outsideGrammar(): boolean {
    return this.#entries.some((entry) => entry.outsideGrammar);
  }

  /**
   * Admits a token of the file (compared in constant time with every one), with its entry's view; the entry's name is
   * the subject.
   *
   * @returns the admission, or `undefined` for a token the file does not hold.
   */
  admit(token: string): Admitted | undefined {
    return this.#find(tokenDigest(token), 'digest');
  }

  /** Admits the feed key of a token of the file (compared in constant time with every one), with its view. */
  admitFeedKey(key: string): Admitted | undefined {
    return this.#find(tokenDigest(key), 'feedDigest');
  }

  #find(digest: Buffer, field: 'digest' | 'feedDigest'): Admitted | undefined {
    let found: Visibility | undefined;
    for (const entry of this.#entries) if (timingSafeEqual(digest, entry[field])) found = entry.view;
    return found === undefined ? undefined : { ok: true, view: found, subject: found.name, expiresAt: Infinity };
  }

  /** Never reused: a reload may revoke any token at any moment. */
  reusableUntil(): number {
    return 0;
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
      this.#warnOutsideGrammar();
    } catch (error) {
      this.#warn(`${this.#file} could not be used (${(error as Error).message}); the previous tokens stay in force`);
      return;
    }
    this.#reloaded(new Set(this.#entries.map((entry) => entry.view)));
  }

  /** Says the deprecation warning once per reading of the file that holds a token outside the grammar. */
  #warnOutsideGrammar(): void {
    const names = this.#entries.filter((entry) => entry.outsideGrammar).map((entry) => entry.view.name);
    if (names.length > 0) this.#deprecated(outsideGrammarWarning(`${this.#file}: the token of ${names.join(', ')}`));
  }
}

/** One token's view as a key: its digest, name, prefixes and withholding (a changed token gets a new view). */
function viewKey({ digest, view }: TokenEntry): string {
  return JSON.stringify([digest.toString('hex'), view.name, view.prefixes, view.withholdExecutables === true]);
}
