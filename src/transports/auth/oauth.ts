/**
 * The OAuth 2.0 resource server of `--http` (`--auth-issuer`; docs/ARCHITECTURE.md, "Authorization"; MCP
 * 2026-07-28, Authorization), as one {@link Authorizer} of the gate: who a bearer token is, which view its claims
 * show, and the Protected Resource Metadata its refusals point at.
 */
import { AUTH_FAILURES, RESOURCE_METADATA_PATH, resourceMetadata, resourceMetadataUrl } from './challenge.js';
import type { ClaimViews } from './claims.js';
import type { Admitted, Authorizer, Verdict } from './gate.js';
import type { IntrospectionClient } from './introspect.js';
import { type Accepted, TokenVerifier, type Verdict as TokenVerdict } from './verify.js';

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

/** The resource server of one HTTP adapter. */
export class OAuthAuthorizer implements Authorizer {
  /** Every reason but `unknown_token`: each token is judged here (the grammar's reasons are the gate's). */
  readonly failures = AUTH_FAILURES.filter((reason) => reason !== 'unknown_token');
  readonly scoped = true;
  readonly challenge: { readonly metadataUrl: string; readonly scopes: readonly string[] };
  readonly audience: string;
  readonly metadataUrl: string;
  /** The paths the metadata is served at: the bare well-known path and the one suffixed with the resource's path. */
  readonly metadataPaths: ReadonlySet<string>;
  readonly #verifier: TokenVerifier;
  readonly #views: ClaimViews | undefined;
  readonly #metadataBody: string;
  /** What each verdict admits, for as long as the verifier keeps the verdict. */
  readonly #admitted = new WeakMap<Accepted, Verdict>();

  /**
   * @param settings the resolved flags.
   * @param audience the resource identifier (the flag, or the canonical URL).
   * @param views the claims file's views, when given.
   */
  constructor(settings: OAuthSettings, audience: string, views: ClaimViews | undefined) {
    this.audience = audience;
    this.metadataUrl = resourceMetadataUrl(audience);
    this.metadataPaths = new Set([RESOURCE_METADATA_PATH, new URL(this.metadataUrl).pathname]);
    this.challenge = { metadataUrl: this.metadataUrl, scopes: settings.scopes };
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
   * Judges a token: at once when its verdict is kept ({@link TokenVerifier.kept}: every request of a client after its
   * first), after its signature is verified or it is introspected otherwise.
   *
   * @returns {@link Admitted} with the view its claims show, or {@link Denied} with the reason (never `undefined`:
   *   every token is this authorizer's to judge).
   */
  admit(token: string, now: number): Verdict | Promise<Verdict> {
    const kept = this.#verifier.kept(token, now);
    if (kept !== undefined) return this.#admit(kept.verdict);
    return this.#verifier.verify(token, now).then((verdict) => this.#admit(verdict));
  }

  /** An admission holds on its connection for as long as the verifier keeps the token's verdict. */
  reusableUntil(_admitted: Admitted, token: string, now: number): number {
    return this.#verifier.kept(token, now)?.until ?? 0;
  }

  /** What a verdict admits: its view and subject (worked out once per verdict object, as long as it is kept). */
  #admit(verdict: TokenVerdict): Verdict {
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
}
