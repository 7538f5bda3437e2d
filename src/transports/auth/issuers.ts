/**
 * The trusted authorization servers (`--auth-issuer`): each one's metadata discovered (RFC 8414 §3, then OpenID
 * Connect Discovery 1.0 §4) and kept, and its signing keys fetched from its `jwks_uri` through `jose`'s remote key
 * set, which keeps them and fetches them again when a token names a key it does not hold (a rotation) or when they are
 * older than {@link JWKS_MAX_AGE_MS} (docs/ARCHITECTURE.md, "Authorization").
 */
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';

/** How long discovered metadata is kept before it is fetched again (ms). */
export const METADATA_MAX_AGE_MS = 3_600_000;
/** After a failed discovery, how long before it is tried again (ms): requests meanwhile fail closed at once. */
export const DISCOVERY_RETRY_MS = 10_000;
/**
 * Longest time keys are used without a successful fetch of the key set (ms): while the issuer is unreachable, tokens
 * signed with kept keys still verify for up to this long; then every token fails closed (`keys_unavailable`).
 */
export const JWKS_MAX_AGE_MS = 600_000;
/** Shortest time between two fetches of a key set for unknown `kid`s (ms): at most one fetch a second per issuer. */
export const JWKS_COOLDOWN_MS = 1000;
/** Timeout of each metadata, key set or introspection request (ms). */
export const OUTBOUND_TIMEOUT_MS = 5000;

/** What is used of an authorization server's metadata. */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
}

/** The well-known metadata URLs of an issuer, in the order they are tried (RFC 8414 §3.1, OIDC Discovery §4). */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/u, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

/** One trusted authorization server. */
export class Issuer {
  readonly issuer: string;
  #metadata: IssuerMetadata | undefined;
  #fetchedAt = 0;
  #failedAt = -Infinity;
  #pending: Promise<IssuerMetadata> | undefined;
  #jwks: JWTVerifyGetKey | undefined;
  #jwksUri: string | undefined;

  /** @param issuer the issuer identifier exactly as tokens carry it in `iss`. */
  constructor(issuer: string) {
    this.issuer = issuer;
  }

  /** Whether its metadata has been discovered once (it is kept from then on, a failed refresh included). */
  get discovered(): boolean {
    return this.#metadata !== undefined;
  }

  /**
   * The issuer's metadata, discovered on first use and kept for {@link METADATA_MAX_AGE_MS} (a failed refresh keeps
   * the previous metadata).
   *
   * @throws Error when it cannot be fetched, is not JSON, or names another issuer (RFC 8414 §3.3).
   */
  async metadata(): Promise<IssuerMetadata> {
    const now = Date.now();
    if (this.#metadata !== undefined && now - this.#fetchedAt < METADATA_MAX_AGE_MS) return this.#metadata;
    if (this.#metadata === undefined && now - this.#failedAt < DISCOVERY_RETRY_MS)
      throw new Error(`metadata of ${this.issuer} could not be fetched`);
    this.#pending ??= this.#discover().finally(() => (this.#pending = undefined));
    try {
      return await this.#pending;
    } catch (error) {
      if (this.#metadata !== undefined) return this.#metadata;
      throw error;
    }
  }

  /**
   * The issuer's key set, for `jwtVerify`.
   *
   * @throws Error when the metadata cannot be discovered or names no `jwks_uri`.
   */
  async keys(): Promise<JWTVerifyGetKey> {
    const { jwks_uri: uri } = await this.metadata();
    if (uri === undefined) throw new Error(`${this.issuer} publishes no jwks_uri`);
    if (this.#jwks === undefined || this.#jwksUri !== uri) {
      this.#jwks = createRemoteJWKSet(new URL(uri), {
        cacheMaxAge: JWKS_MAX_AGE_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        timeoutDuration: OUTBOUND_TIMEOUT_MS,
      });
      this.#jwksUri = uri;
    }
    return this.#jwks;
  }

  async #discover(): Promise<IssuerMetadata> {
    const problems: string[] = [];
    for (const url of metadataUrls(this.issuer)) {
      try {
        const response = await fetch(url, {
          headers: { accept: 'application/json' },
          redirect: 'error',
          signal: AbortSignal.timeout(OUTBOUND_TIMEOUT_MS),
        });
        if (!response.ok) {
          problems.push(`${url}: HTTP ${response.status}`);
          continue;
        }
        const body = (await response.json()) as Partial<Record<keyof IssuerMetadata, unknown>> | null;
        if (body?.issuer !== this.issuer) throw new Error(`${url} names issuer ${JSON.stringify(body?.issuer)}`);
        const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
        const metadata: IssuerMetadata = {
          issuer: this.issuer,
          ...(text(body.jwks_uri) === undefined ? {} : { jwks_uri: text(body.jwks_uri) }),
          ...(text(body.introspection_endpoint) === undefined
            ? {}
            : { introspection_endpoint: text(body.introspection_endpoint) }),
        };
        this.#metadata = metadata;
        this.#fetchedAt = Date.now();
        return metadata;
      } catch (error) {
        problems.push(`${url}: ${(error as Error).message}`);
      }
    }
    this.#failedAt = Date.now();
    throw new Error(`metadata of ${this.issuer} could not be discovered (${problems.join('; ')})`);
  }
}
