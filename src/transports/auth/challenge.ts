/**
 * The pure parts of the OAuth 2.0 resource server (docs/ARCHITECTURE.md, "Authorization"): the bearer credential of
 * an `Authorization` header (RFC 6750 §2.1), the Protected Resource Metadata document and where it is served
 * (RFC 9728 §2, §3.1), and the `WWW-Authenticate` challenges of a refused request (RFC 6750 §3, RFC 9728 §5.1).
 */

/** Longest bearer credential accepted (characters); real access tokens are a few KiB at most. */
export const MAX_BEARER_CHARS = 8 * 1024;

/** RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/iu;

/**
 * The bearer credential of an `Authorization` header.
 *
 * @param header the header's value as received (`undefined` when absent; several headers, joined by the HTTP
 *   adapter, count as one malformed value).
 * @returns `{ token }`, `'missing'` when there is no header, `'too_long'` for a bearer credential of more than
 *   {@link MAX_BEARER_CHARS} characters, or `'malformed'` for anything else that is not exactly `Bearer <b64token>`.
 */
export function parseBearer(
  header: string | undefined,
): { readonly token: string } | 'missing' | 'malformed' | 'too_long' {
  if (header === undefined || header === '') return 'missing';
  // Longer than any token accepted: not scanned further.
  if (header.length > MAX_BEARER_CHARS + 16) return /^Bearer /iu.test(header) ? 'too_long' : 'malformed';
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) return 'malformed';
  return token.length > MAX_BEARER_CHARS ? 'too_long' : { token };
}

/** Whether a configured token can be sent as a bearer credential this grammar reads (RFC 6750 §2.1). */
export function isBearerToken(token: string): boolean {
  return token.length <= MAX_BEARER_CHARS && BEARER.test(`Bearer ${token}`);
}

/** The well-known path prefix of Protected Resource Metadata (RFC 9728 §3). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * Where the metadata of a resource is published: the well-known path inserted between the resource URL's host and its
 * path (RFC 9728 §3.1): `https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`.
 *
 * @param resource the resource identifier, an absolute `http(s)` URL without a fragment.
 * @returns the metadata URL.
 */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${RESOURCE_METADATA_PATH}${path}${url.search}`;
}

/** The Protected Resource Metadata document (RFC 9728 §2). */
export interface ResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly ['header'];
  readonly resource_name: string;
}

/**
 * The metadata document of this server.
 *
 * @param resource the resource identifier (`--auth-audience`).
 * @param issuers the trusted authorization servers' issuer identifiers (`--auth-issuer`).
 * @param scopes the scopes a token must carry (`--auth-scopes`).
 */
export function resourceMetadata(
  resource: string,
  issuers: readonly string[],
  scopes: readonly string[],
): ResourceMetadata {
  return {
    resource,
    authorization_servers: issuers,
    scopes_supported: scopes,
    bearer_methods_supported: ['header'],
    resource_name: 'skills-serve',
  };
}

/**
 * Every reason a request to a gated route is refused for (the `reason` label of the auth failure count):
 * `unknown_token` only without `--auth-issuer` (a token none of the static tokens is), the rest of `--auth-issuer`.
 */
export const AUTH_FAILURES = [
  'missing',
  'malformed',
  'too_long',
  'unknown_token',
  'unknown_issuer',
  'algorithm',
  'unknown_key',
  'signature',
  'claims',
  'audience',
  'expired',
  'not_yet_valid',
  'not_a_jwt',
  'inactive',
  'opaque_unsupported',
  'keys_unavailable',
  'introspection_unavailable',
  'insufficient_scope',
  'no_view',
] as const;

/** Why a request was refused: the label of `skills_serve_auth_failures_total` and of the access log. */
export type AuthFailure = (typeof AUTH_FAILURES)[number];

/** A quoted-string of RFC 9110 §5.6.4 (the values we put there never hold `"` or `\`, but stay safe). */
const quoted = (value: string): string => `"${value.replace(/["\\]/gu, '\\$&')}"`;

/**
 * The `WWW-Authenticate` value of a refused request.
 *
 * @param failure why: `missing` gives no error code (RFC 6750 §3.1: a request without credentials),
 *   `insufficient_scope` and `no_view` give `error="insufficient_scope"` and the scopes (a 403),
 *   anything else `error="invalid_token"`.
 * @param resource under `--auth-issuer`: {@link resourceMetadataUrl} of the resource (RFC 9728 §5.1) and the
 *   required scopes; without it (static tokens) the challenge names the realm `skills-serve`.
 */
export function challenge(
  failure: AuthFailure,
  resource?: { readonly metadataUrl: string; readonly scopes: readonly string[] },
): string {
  const parts = [resource === undefined ? 'realm="skills-serve"' : `resource_metadata=${quoted(resource.metadataUrl)}`];
  if (failure === 'insufficient_scope' || failure === 'no_view')
    parts.push('error="insufficient_scope"', `scope=${quoted((resource?.scopes ?? []).join(' '))}`);
  else if (failure !== 'missing') parts.push('error="invalid_token"', `error_description=${quoted(describe(failure))}`);
  return `Bearer ${parts.join(', ')}`;
}

/** The HTTP status of a refusal: 403 when the token is good but not enough (RFC 6750 §3.1), else 401. */
export function statusOf(failure: AuthFailure): 401 | 403 {
  return failure === 'insufficient_scope' || failure === 'no_view' ? 403 : 401;
}

/** A short description of a refusal for `error_description` and the JSON-RPC error (never the token). */
export function describe(failure: AuthFailure): string {
  switch (failure) {
    case 'missing':
      return 'send Authorization: Bearer <token>';
    case 'unknown_token':
      return 'the token is not one this server accepts';
    case 'malformed':
      return 'the Authorization header is not one bearer token';
    case 'too_long':
      return `the bearer token is longer than ${MAX_BEARER_CHARS} characters`;
    case 'unknown_issuer':
      return 'the token was not issued by a trusted authorization server';
    case 'algorithm':
      return 'the token is not signed with an accepted asymmetric algorithm';
    case 'unknown_key':
      return "the token's signing key is not among the issuer's keys";
    case 'signature':
      return 'the token signature does not verify';
    case 'claims':
      return 'the token has no exp, or a claim of the wrong type';
    case 'audience':
      return 'the token was not issued for this resource';
    case 'expired':
      return 'the token has expired';
    case 'not_yet_valid':
      return 'the token is not valid yet';
    case 'not_a_jwt':
      return 'the token has three parts but is not a JWT';
    case 'inactive':
      return 'the token is not active';
    case 'opaque_unsupported':
      return 'the token is not a JWT, and this server does not introspect opaque tokens';
    case 'keys_unavailable':
      return "the issuer's keys cannot be fetched";
    case 'introspection_unavailable':
      return 'the token cannot be introspected';
    case 'insufficient_scope':
      return 'the token lacks a required scope';
    case 'no_view':
      return "the token's claims grant no skills";
  }
}
