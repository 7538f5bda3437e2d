/**
 * Access-token verification (docs/ARCHITECTURE.md, "Authorization"). A JWT (RFC 9068) is verified locally with
 * `jose`: only asymmetric signature algorithms (so neither `alg: none` nor an HMAC keyed with a public key passes),
 * a key of the issuer's key set named by `kid`, the issuer one of `--auth-issuer`, the audience `--auth-audience`
 * (RFC 8707), `exp` required and `exp`/`nbf`/`iat` checked with {@link CLOCK_SKEW_S} of tolerance (an `iat` in the
 * future is `not_yet_valid`). Three dot-separated parts that do not decode as a JWT are `not_a_jwt` (an authorization
 * server does not introspect what looks like a JWT); any other token is opaque and is introspected (RFC 7662,
 * `introspect.ts`). Then the scopes. Verdicts of tokens whose signature or introspection succeeded are kept (bounded)
 * until the token expires (`exp` plus the skew), at most {@link VERIFIED_CACHE_MS}.
 */
import { decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose';

import type { AuthFailure } from './challenge.js';
import { introspect, type IntrospectionClient } from './introspect.js';
import { Issuer } from './issuers.js';

/** The signature algorithms accepted (RFC 7518 §3.1, RFC 8037): asymmetric only. */
export const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
const ACCEPTED = new Set<string>(ACCEPTED_ALGORITHMS);

/** Tolerance of `exp`, `nbf` and `iat` for clocks that disagree (seconds). */
export const CLOCK_SKEW_S = 5;
/** Longest time a verdict is kept (ms): a key removed from the issuer's set stops working within this. */
export const VERIFIED_CACHE_MS = 60_000;
/** Most verdicts kept; the oldest goes first. */
export const VERIFIED_CACHE_MAX = 10_000;
/** Most characters of tokens the kept verdicts are keyed by (8 MiB of one-byte strings); the oldest go first. */
export const VERIFIED_CACHE_CHARS = 8 * 1024 * 1024;

/** What the resource server checks. */
export interface VerifierOptions {
  /** Trusted issuer identifiers, exactly as in `iss`. */
  readonly issuers: readonly string[];
  /** This resource's identifier: every token's `aud` must hold it. */
  readonly audience: string;
  /** Scopes every token must carry. */
  readonly scopes: readonly string[];
  /** Credentials for RFC 7662 introspection of opaque tokens; without them opaque tokens are refused. */
  readonly introspection?: IntrospectionClient | undefined;
}

/**
 * An accepted token: its claims (as verified or introspected), who it is, and until when it holds (ms epoch: `exp`
 * plus {@link CLOCK_SKEW_S}).
 */
export interface Accepted {
  readonly ok: true;
  readonly claims: Readonly<JWTPayload>;
  /** `sub`, else `client_id` (a client credentials token); `undefined` when it carries neither. */
  readonly subject: string | undefined;
  readonly expiresAt: number;
}

/** A refused token. */
export interface Refused {
  readonly ok: false;
  readonly reason: AuthFailure;
}

export type Verdict = Accepted | Refused;

/** A verdict kept for a token, and until when (ms epoch). */
export interface Kept {
  readonly verdict: Verdict;
  readonly until: number;
}

/** The scopes of a token: `scope` (RFC 9068 §2.2.3, space-separated) or `scp` (a list or a string). */
export function scopesOf(claims: Readonly<JWTPayload>): Set<string> {
  const out = new Set<string>();
  for (const value of [claims['scope'], claims['scp']]) {
    if (typeof value === 'string') for (const scope of value.split(' ')) if (scope !== '') out.add(scope);
    if (Array.isArray(value)) for (const scope of value) if (typeof scope === 'string') out.add(scope);
  }
  return out;
}

/** Maps a `jose` error to the reason a token is refused. */
function reasonOf(error: unknown): AuthFailure {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    // A time claim that is not a number is `claims`; one that is checked and fails is `not_yet_valid`.
    if ((error.claim === 'nbf' || error.claim === 'iat') && error.reason === 'check_failed') return 'not_yet_valid';
    if (error.claim === 'aud') return 'audience';
    if (error.claim === 'iss') return 'unknown_issuer';
    return 'claims';
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return 'algorithm';
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return 'unknown_key';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return 'malformed';
  return 'keys_unavailable'; // JWKSTimeout, JWKSInvalid, a network error: fail closed
}

/** Verifies access tokens for one resource. */
export class TokenVerifier {
  readonly #options: VerifierOptions;
  readonly #issuers: ReadonlyMap<string, Issuer>;
  /**
   * Kept verdicts by token, oldest first. Keyed by the token itself: a map lookup hashes it with V8's string hash,
   * where a SHA-256 of a 1 KB JWT was most of what authorization added to a request (counted with callgrind).
   */
  readonly #kept = new Map<string, Kept>();
  /** The characters of the tokens in {@link #kept}. */
  #keptChars = 0;

  constructor(options: VerifierOptions) {
    this.#options = options;
    this.#issuers = new Map(options.issuers.map((issuer) => [issuer, new Issuer(issuer)]));
  }

  /** The trusted issuers, for discovery at start. */
  get issuers(): readonly Issuer[] {
    return [...this.#issuers.values()];
  }

  /**
   * The verdict kept for a token, without waiting: what {@link verify} answers without checking a signature or asking
   * an introspection endpoint. The same verdict object is returned for as long as it is kept.
   *
   * @param token the credential of the `Authorization` header (`parseBearer`).
   * @param now the time (ms epoch).
   * @returns the kept verdict and until when it is kept (ms epoch), or `undefined` when none is kept (or it lapsed):
   *   the token must be verified.
   */
  kept(token: string, now = Date.now()): Kept | undefined {
    const kept = this.#kept.get(token);
    if (kept === undefined) return undefined;
    if (kept.until > now) return kept;
    this.#forget(token);
    return undefined;
  }

  /**
   * Verifies one bearer token.
   *
   * @param token the credential of the `Authorization` header (`parseBearer`).
   * @param now the time (ms epoch), for the kept verdicts.
   * @returns the verdict; never throws (anything unexpected is `keys_unavailable`: fail closed).
   */
  async verify(token: string, now = Date.now()): Promise<Verdict> {
    const known = this.kept(token, now);
    if (known !== undefined) return known.verdict;
    let verdict: Verdict;
    let keep: boolean;
    try {
      if (token.split('.').length !== 3) ({ verdict, keep } = await this.#introspect(token));
      else {
        const header = jwtHeader(token);
        ({ verdict, keep } =
          header === undefined
            ? { verdict: { ok: false, reason: 'not_a_jwt' }, keep: false }
            : await this.#verifyJwt(token, header));
      }
    } catch {
      return { ok: false, reason: 'keys_unavailable' };
    }
    if (verdict.ok) verdict = this.#checkScopes(verdict);
    if (keep) {
      const expiresAt = verdict.ok ? verdict.expiresAt : now + VERIFIED_CACHE_MS;
      this.#forget(token);
      while (this.#kept.size >= VERIFIED_CACHE_MAX || this.#keptChars + token.length > VERIFIED_CACHE_CHARS)
        this.#forget(this.#kept.keys().next().value as string);
      this.#kept.set(token, { verdict, until: Math.min(expiresAt, now + VERIFIED_CACHE_MS) });
      this.#keptChars += token.length;
    }
    return verdict;
  }

  /** Drops a token's kept verdict, if any. */
  #forget(token: string): void {
    if (this.#kept.delete(token)) this.#keptChars -= token.length;
  }

  #checkScopes(accepted: Accepted): Verdict {
    const granted = scopesOf(accepted.claims);
    return this.#options.scopes.every((scope) => granted.has(scope))
      ? accepted
      : { ok: false, reason: 'insufficient_scope' };
  }

  async #verifyJwt(token: string, { alg, iss }: JwtHeader): Promise<{ verdict: Verdict; keep: boolean }> {
    if (typeof alg !== 'string' || !ACCEPTED.has(alg))
      return { verdict: { ok: false, reason: 'algorithm' }, keep: false };
    const issuer = typeof iss === 'string' ? this.#issuers.get(iss) : undefined;
    if (issuer === undefined) return { verdict: { ok: false, reason: 'unknown_issuer' }, keep: false };
    let keys;
    try {
      keys = await issuer.keys();
    } catch {
      return { verdict: { ok: false, reason: 'keys_unavailable' }, keep: false };
    }
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: issuer.issuer,
        audience: this.#options.audience,
        algorithms: [...ACCEPTED_ALGORITHMS],
        clockTolerance: CLOCK_SKEW_S,
        requiredClaims: ['exp'],
      });
      if (issuedInFuture(payload)) return { verdict: { ok: false, reason: 'not_yet_valid' }, keep: false };
      return { verdict: accept(payload), keep: true };
    } catch (error) {
      return { verdict: { ok: false, reason: reasonOf(error) }, keep: false };
    }
  }

  async #introspect(token: string): Promise<{ verdict: Verdict; keep: boolean }> {
    const client = this.#options.introspection;
    if (client === undefined) return { verdict: { ok: false, reason: 'opaque_unsupported' }, keep: false };
    let unavailable = false;
    let asked = false;
    for (const issuer of this.#issuers.values()) {
      let endpoint: string | undefined;
      try {
        endpoint = (await issuer.metadata()).introspection_endpoint;
      } catch {
        unavailable = true;
        continue;
      }
      if (endpoint === undefined) continue;
      asked = true;
      const answer = await introspect(endpoint, token, client).catch(() => undefined);
      if (answer === undefined) {
        unavailable = true;
        continue;
      }
      if (answer.active !== true) continue;
      const verdict = this.#checkIntrospected(answer, issuer.issuer);
      return { verdict, keep: true };
    }
    // An inactive answer is kept too (a token never becomes active again); an unreachable endpoint is not.
    if (unavailable) return { verdict: { ok: false, reason: 'introspection_unavailable' }, keep: false };
    return asked
      ? { verdict: { ok: false, reason: 'inactive' }, keep: true }
      : { verdict: { ok: false, reason: 'opaque_unsupported' }, keep: false };
  }

  /** Checks what an introspection endpoint said of an active token (RFC 7662 §2.2) as a JWT's claims are checked. */
  #checkIntrospected(answer: JWTPayload, issuer: string): Verdict {
    const nowS = Date.now() / 1000;
    if (answer.iss !== undefined && answer.iss !== issuer) return { ok: false, reason: 'unknown_issuer' };
    const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
    if (!audiences.includes(this.#options.audience)) return { ok: false, reason: 'audience' };
    if (typeof answer.exp !== 'number') return { ok: false, reason: 'claims' };
    if (answer.exp + CLOCK_SKEW_S <= nowS) return { ok: false, reason: 'expired' };
    if ((typeof answer.nbf === 'number' && answer.nbf - CLOCK_SKEW_S > nowS) || issuedInFuture(answer, nowS))
      return { ok: false, reason: 'not_yet_valid' };
    return accept(answer);
  }
}

/** What a JWT's verification starts from: its header's `alg` and its payload's `iss`, not yet trusted. */
interface JwtHeader {
  readonly alg: unknown;
  readonly iss: unknown;
}

/** The `alg` and `iss` of a token that decodes as a JWT (RFC 7519 §7.2, steps 1 to 6), or `undefined`. */
function jwtHeader(token: string): JwtHeader | undefined {
  try {
    return { alg: decodeProtectedHeader(token).alg, iss: decodeJwt(token).iss };
  } catch {
    return undefined;
  }
}

/**
 * Whether a token says it was issued later than now and the skew allow (`iat`, RFC 7519 §4.1.6): a clock that far
 * ahead, or a forged time. `jose` checks `iat` only against a maximum age, which this server does not set.
 */
function issuedInFuture(claims: Readonly<JWTPayload>, nowS = Date.now() / 1000): boolean {
  return typeof claims.iat === 'number' && claims.iat - CLOCK_SKEW_S > nowS;
}

/**
 * An accepted token's verdict; the subject is `sub`, else `client_id` (a client credentials token). It holds until
 * `exp` and the skew have passed, the instant verification would refuse it, so a listen stream ends when a request
 * with its token would be refused.
 */
function accept(claims: JWTPayload): Accepted {
  const subject =
    typeof claims.sub === 'string'
      ? claims.sub
      : typeof claims['client_id'] === 'string'
        ? claims['client_id']
        : undefined;
  return { ok: true, claims: Object.freeze(claims), subject, expiresAt: ((claims.exp ?? 0) + CLOCK_SKEW_S) * 1000 };
}
