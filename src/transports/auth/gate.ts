/**
 * The one gate of `--http` (docs/ARCHITECTURE.md, "Authorization"): every request to a gated route passes it. Every
 * way to authorize (`--http-token`, `--http-tokens FILE`, `--auth-issuer`, and the next one) is an
 * {@link Authorizer}; the gate reads the `Authorization` header with the one bearer grammar ({@link parseBearer}),
 * asks the authorizers in order, remembers per connection what it admitted, and words every refusal one way: status,
 * `WWW-Authenticate`, JSON-RPC error body, and the reason the access log and `skills_serve_auth_failures_total` carry.
 */
import { hash } from 'node:crypto';

import type { Visibility } from '../../server/visibility.js';
import { AUTH_FAILURES, type AuthFailure, challenge, describe, parseBearer, statusOf } from './challenge.js';

/**
 * A request let through: its view (`undefined`: everything), subject (for the access log), and until when the
 * admission holds (ms epoch; `Infinity` for a static token): a listen stream opened with it is ended then.
 */
export interface Admitted {
  readonly ok: true;
  readonly view: Visibility | undefined;
  readonly subject: string | undefined;
  readonly expiresAt: number;
}

/** A refused request, and why. */
export interface Denied {
  readonly ok: false;
  readonly reason: AuthFailure;
}

/** What an authorizer says of a token: admitted, refused, or (`undefined`) not one of its own. */
export type Verdict = Admitted | Denied;

/**
 * One way to authorize a bearer token. The gate parses the header; an authorizer only judges the token.
 */
export interface Authorizer {
  /** Every reason {@link admit} may refuse with (each is a metrics series from the start). */
  readonly failures: readonly AuthFailure[];
  /**
   * Whether it may admit callers to less than everything, or callers it does not list (OAuth): then `/healthz` tells
   * unauthenticated callers no skill count.
   */
  readonly scoped: boolean;
  /** Challenge parameters every refusal carries (RFC 6750 §3), e.g. `resource_metadata` (RFC 9728 §5.1). */
  readonly challenge?: { readonly metadataUrl: string; readonly scopes: readonly string[] } | undefined;
  /**
   * Judges one token.
   *
   * @param token the bearer credential, as the grammar read it (or, for a token configured outside the grammar,
   *   everything after `Bearer `).
   * @param now the time (ms epoch).
   * @returns a verdict, a promise of one when the token has to be verified first, or `undefined` when the token is
   *   not this authorizer's (the next one is asked; after the last, the request is refused as `unknown_token`).
   */
  admit(token: string, now: number): Verdict | Promise<Verdict> | undefined;
  /**
   * Until when a verdict may be reused for the same header on the same connection without asking again (ms epoch;
   * 0: never). An authorizer whose tokens may be revoked at any moment (a reloaded file) answers 0.
   */
  reusableUntil(admitted: Admitted, token: string, now: number): number;
  /**
   * Admits the feed key of one of its tokens ({@link feedKeyOf}: the discovery feed's URL for clients that send no
   * `Authorization` header), with that token's view; `undefined` for any other key. Static tokens only: an OAuth
   * access token lives minutes, a feed URL is kept in an installer's lock file.
   */
  admitFeedKey?(key: string): Admitted | undefined;
  /** Whether it holds a token the grammar cannot read (deprecated: accepted as exactly `Bearer <token>`). */
  readonly outsideGrammar?: boolean;
  /** Stops what it follows (a file, timers). */
  close?(): void;
}

/** The answer to a refused request. */
export interface Refusal {
  readonly status: 401 | 403;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The reasons the grammar itself refuses with, before any authorizer is asked. */
const GRAMMAR_FAILURES = ['missing', 'malformed', 'too_long'] as const satisfies readonly AuthFailure[];

/** The gate of one HTTP adapter: its authorizers, in the order they are asked. */
export class Gate {
  readonly #authorizers: readonly Authorizer[];
  readonly #challenge: Authorizer['challenge'];
  /**
   * Per connection (its socket), the header last admitted on it and until when that admission may be reused: a host
   * sends one token on every request of its keep-alive connection, and comparing headers costs less than judging the
   * token again.
   */
  readonly #lastOf = new WeakMap<object, { readonly header: string; readonly admitted: Admitted; until: number }>();

  /** @param authorizers asked in this order; none: every request is admitted, seeing everything. */
  constructor(authorizers: readonly Authorizer[]) {
    this.#authorizers = authorizers;
    this.#challenge = authorizers.find((authorizer) => authorizer.challenge !== undefined)?.challenge;
  }

  /** Whether nobody is asked for a token. */
  get open(): boolean {
    return this.#authorizers.length === 0;
  }

  /** Whether `/healthz` may tell unauthenticated callers the skill count ({@link Authorizer.scoped}). */
  get countsArePublic(): boolean {
    return !this.#authorizers.some((authorizer) => authorizer.scoped);
  }

  /** Every reason a request may be refused for in this configuration, in {@link AUTH_FAILURES} order. */
  get failures(): readonly AuthFailure[] {
    if (this.open) return [];
    const reasons = new Set<AuthFailure>([...GRAMMAR_FAILURES, 'unknown_token']);
    for (const authorizer of this.#authorizers) for (const reason of authorizer.failures) reasons.add(reason);
    // OAuth judges every token it is handed: nothing is left over as unknown.
    if (this.#challenge !== undefined) reasons.delete('unknown_token');
    return AUTH_FAILURES.filter((reason) => reasons.has(reason));
  }

  /**
   * Authorizes one request: at once when the header is the one admitted last on its connection (while reusable), is
   * malformed, or its token is judged without waiting; after verification otherwise.
   *
   * @param header its `Authorization` value (several headers joined by `, `: a malformed value).
   * @param connection what the request came on (its socket).
   * @param now the time (ms epoch).
   * @returns {@link Admitted} or {@link Denied}; a promise of either only when a token has to be verified first.
   */
  authorize(header: string | undefined, connection: object, now = Date.now()): Verdict | Promise<Verdict> {
    if (this.open) return EVERYTHING;
    const last = this.#lastOf.get(connection);
    if (last !== undefined && last.header === header && last.until > now) return last.admitted;
    const token = this.#tokenOf(header);
    if (typeof token !== 'string') return { ok: false, reason: token.refused };
    return this.#ask(token, header as string, connection, now);
  }

  /** The answer to a request refused for `reason` (RFC 6750 §3; RFC 9728 §5.1 when metadata is published). */
  refusal(reason: AuthFailure): Refusal {
    const status = statusOf(reason);
    return {
      status,
      headers: { 'content-type': 'application/json', 'www-authenticate': challenge(reason, this.#challenge) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: `${status === 401 ? 'Unauthorized' : 'Forbidden'}: ${describe(reason)}` },
      }),
    };
  }

  /**
   * Admits a request by a feed key in its path instead of a header (docs/feed.md, "Views").
   *
   * @returns the admission of the token the key was made from, or `unknown_token`.
   */
  admitFeed(key: string): Verdict {
    for (const authorizer of this.#authorizers) {
      const admitted = authorizer.admitFeedKey?.(key);
      if (admitted !== undefined) return admitted;
    }
    return UNKNOWN;
  }

  /**
   * The feed key of the token in an `Authorization` header, when an authorizer admits that key (a static token).
   *
   * @returns `undefined` for a missing or malformed header, or a token without a feed (OAuth).
   */
  feedKeyFor(header: string | undefined): string | undefined {
    const token = this.#tokenOf(header);
    if (typeof token !== 'string') return undefined;
    const key = feedKeyOf(token);
    return this.admitFeed(key).ok ? key : undefined;
  }

  /** Stops every authorizer. */
  close(): void {
    for (const authorizer of this.#authorizers) authorizer.close?.();
  }

  /**
   * The token of an `Authorization` header, read with the one grammar; a static token outside it (deprecated) only as
   * exactly `Bearer <token>`.
   */
  #tokenOf(header: string | undefined): string | { refused: 'missing' | 'malformed' | 'too_long' } {
    const bearer = parseBearer(header);
    if (typeof bearer !== 'string') return bearer.token;
    const outsideGrammar = this.#authorizers.some((authorizer) => authorizer.outsideGrammar === true);
    if (bearer === 'malformed' && outsideGrammar && header?.startsWith('Bearer ')) return header.slice(7);
    return { refused: bearer };
  }

  /** Asks the authorizers in order, remembering an admission on the connection. */
  #ask(token: string, header: string, connection: object, now: number): Verdict | Promise<Verdict> {
    for (const authorizer of this.#authorizers) {
      const verdict = authorizer.admit(token, now);
      if (verdict === undefined) continue;
      const settle = (settled: Verdict): Verdict => {
        if (settled.ok) {
          const until = authorizer.reusableUntil(settled, token, now);
          if (until > now) this.#lastOf.set(connection, { header, admitted: settled, until });
        }
        return settled;
      };
      return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
    }
    return UNKNOWN;
  }
}

const EVERYTHING: Admitted = Object.freeze({ ok: true, view: undefined, subject: undefined, expiresAt: Infinity });
const UNKNOWN: Denied = Object.freeze({ ok: false, reason: 'unknown_token' });

/**
 * The feed key of a static token: base64url of SHA-256 over a fixed label and the token (43 characters, 256 bits).
 * Anyone holding the token can compute it, nobody can get the token back from it; it is the same on every replica
 * and after every restart, and changes when the token does (docs/feed.md, "Views").
 */
export function feedKeyOf(token: string): string {
  return hash('sha256', `skills-serve feed key\n${token}`, 'base64url');
}
