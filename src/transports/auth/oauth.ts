/**
 * The OAuth 2.0 resource server of `--http` (`--auth-issuer`; docs/ARCHITECTURE.md, "Authorization"; MCP
 * 2026-07-28, Authorization): who a request's bearer token is, which view its claims show, and what a refused request
 * is answered (401 or 403 with the `WWW-Authenticate` challenge pointing at the Protected Resource Metadata).
 */
import type { Visibility } from '../../server/visibility.js';
import {
  type AuthFailure,
  challenge,
  describe,
  parseBearer,
  RESOURCE_METADATA_PATH,
  resourceMetadata,
  resourceMetadataUrl,
  statusOf,
} from './challenge.js';
import type { ClaimViews } from './claims.js';
import type { IntrospectionClient } from './introspect.js';
import { type Accepted, TokenVerifier, type Verdict } from './verify.js';

/** `--auth-*` as resolved by the CLI. */
export interface OAuthSettings {
  readonly issuers: readonly string[];
  /** `--auth-audience`; `undefined`: the server's canonical URL, `http://<host>:<port>/mcp`. */
  readonly audience?: string | undefined;
  readonly scopes: readonly string[];
  readonly introspection?: IntrospectionClient | undefined;
  /** `--auth-claims FILE`. */
  readonly claimsFile?: string | undefined;
}

/**
 * A request let through: its view (`undefined`: everything), subject, and when its token stops being accepted (ms
 * epoch: `exp` plus the clock skew).
 */
export interface Admitted {
  readonly ok: true;
  readonly view: Visibility | undefined;
  readonly subject: string | undefined;
  readonly expiresAt: number;
}

/** A refused request. */
export interface Denied {
  readonly ok: false;
  readonly reason: AuthFailure;
}

/** The resource server of one HTTP adapter. */
export class OAuthGate {
  readonly audience: string;
  readonly metadataUrl: string;
  /** The paths the metadata is served at: the bare well-known path and the one suffixed with the resource's path. */
  readonly metadataPaths: ReadonlySet<string>;
  readonly #scopes: readonly string[];
  readonly #verifier: TokenVerifier;
  readonly #views: ClaimViews | undefined;
  readonly #metadataBody: string;
  /** What each verdict admits, for as long as the verifier keeps the verdict. */
  readonly #admitted = new WeakMap<Accepted, Admitted | Denied>();
  /**
   * Per connection (its socket), the header last admitted from a kept verdict, and until when that verdict is kept
   * (ms epoch). A host sends one token on every request of its keep-alive connection: comparing the header with the
   * last one costs less than hashing the token for the map of kept verdicts.
   */
  readonly #lastOf = new WeakMap<
    object,
    { readonly header: string; readonly admitted: Admitted; readonly until: number }
  >();

  /**
   * @param settings the resolved flags.
   * @param audience the resource identifier (the flag, or the canonical URL).
   * @param views the claims file's views, when given.
   */
  constructor(settings: OAuthSettings, audience: string, views: ClaimViews | undefined) {
    this.audience = audience;
    this.metadataUrl = resourceMetadataUrl(audience);
    this.metadataPaths = new Set([RESOURCE_METADATA_PATH, new URL(this.metadataUrl).pathname]);
    this.#scopes = settings.scopes;
    this.#views = views;
    this.#verifier = new TokenVerifier({
      issuers: settings.issuers,
      audience,
      scopes: settings.scopes,
      introspection: settings.introspection,
    });
    this.#metadataBody = JSON.stringify(resourceMetadata(audience, settings.issuers, settings.scopes));
  }

  /** The Protected Resource Metadata document (RFC 9728 §2), serialized. */
  get metadataBody(): string {
    return this.#metadataBody;
  }

  /** How many distinct claim views exist (for `/metrics`). */
  get views(): number {
    return this.#views?.size ?? 0;
  }

  /**
   * Whether every issuer (`'all'`), at least one (`'some'`) or none (`'none'`) has been discovered: with none, every
   * token is refused, so the server is not ready (`/readyz`).
   */
  get discovered(): 'all' | 'some' | 'none' {
    const issuers = this.#verifier.issuers;
    const found = issuers.filter((issuer) => issuer.discovered).length;
    return found === issuers.length ? 'all' : found > 0 ? 'some' : 'none';
  }

  /**
   * Discovers every issuer's metadata (each attempt after a failure waits out the issuer's retry delay, so calling
   * this often costs nothing), so a misconfigured issuer is logged at start and an unready server finds it later.
   *
   * @returns per issuer, `undefined` or the reason it could not be discovered.
   */
  async discover(): Promise<{ issuer: string; problem: string | undefined }[]> {
    return Promise.all(
      this.#verifier.issuers.map(async (issuer) => {
        try {
          await issuer.metadata();
          return { issuer: issuer.issuer, problem: undefined };
        } catch (error) {
          return { issuer: issuer.issuer, problem: (error as Error).message };
        }
      }),
    );
  }

  /**
   * Authorizes one request: at once when the header is malformed or is `Bearer <token>` of a token whose verdict is
   * kept ({@link TokenVerifier.kept}: every request of a client after its first), after verification otherwise (a
   * kept verdict found there too when the header spells the scheme another way).
   *
   * @param header its `Authorization` value.
   * @param connection what the request came on (its socket): the header admitted last on it is admitted again, as
   *   long as its verdict is kept, by comparing the two.
   * @param now the time (ms epoch).
   * @returns {@link Admitted} with the token's view, or {@link Denied} with the reason; a promise of either only when
   *   the token has to be verified first.
   */
  authorize(
    header: string | undefined,
    connection?: object,
    now = Date.now(),
  ): Admitted | Denied | Promise<Admitted | Denied> {
    const last = connection === undefined ? undefined : this.#lastOf.get(connection);
    if (last !== undefined && last.header === header && last.until > now) return last.admitted;
    // The canonical `Bearer <token>` of a token whose verdict is kept needs no parse: only a token that passed it
    // was verified and kept. Any other form (`bearer`, several spaces) finds its verdict through `verify`.
    const kept = header?.startsWith('Bearer ') ? this.#verifier.kept(header.slice(7), now) : undefined;
    if (header !== undefined && kept !== undefined) {
      const admitted = this.#admit(kept.verdict);
      if (admitted.ok && connection !== undefined)
        this.#lastOf.set(connection, { header, admitted, until: kept.until });
      return admitted;
    }
    const bearer = parseBearer(header);
    if (typeof bearer === 'string') return { ok: false, reason: bearer };
    return this.#verifier.verify(bearer.token).then((verdict) => this.#admit(verdict));
  }

  /** What a verdict admits: its view and subject (worked out once per verdict object, as long as it is kept). */
  #admit(verdict: Verdict): Admitted | Denied {
    if (!verdict.ok) return verdict;
    let admitted = this.#admitted.get(verdict);
    if (admitted === undefined) {
      const view = this.#views?.viewOf(verdict.claims);
      admitted =
        this.#views !== undefined && view === undefined
          ? { ok: false, reason: 'no_view' }
          : { ok: true, view, subject: verdict.subject, expiresAt: verdict.expiresAt };
      this.#admitted.set(verdict, admitted);
    }
    return admitted;
  }

  /**
   * The answer to a refused request.
   *
   * @returns status (401 or 403), headers (`WWW-Authenticate` per RFC 6750 §3 with `resource_metadata`, RFC 9728
   *   §5.1) and a JSON-RPC error body (code -32001) that says why without quoting the token.
   */
  refusal(reason: AuthFailure): { status: 401 | 403; headers: Record<string, string>; body: string } {
    return {
      status: statusOf(reason),
      headers: {
        'content-type': 'application/json',
        'www-authenticate': challenge(reason, this.metadataUrl, this.#scopes),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32001,
          message: `${statusOf(reason) === 401 ? 'Unauthorized' : 'Forbidden'}: ${describe(reason)}`,
        },
      }),
    };
  }
}
