/**
 * RFC 7662 token introspection of opaque access tokens: one POST to the issuer's `introspection_endpoint`,
 * authenticated as a client with `client_secret_basic` (RFC 6749 §2.3.1). What the answer means is checked by
 * `verify.ts`; what is kept, and for how long, too.
 */
import type { JWTPayload } from 'jose';

import { OUTBOUND_TIMEOUT_MS } from './issuers.js';

/** The client the resource server introspects as (`--auth-client-id`, `--auth-client-secret`). */
export interface IntrospectionClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * Introspects one token.
 *
 * @param endpoint the issuer's `introspection_endpoint`.
 * @param token the opaque access token.
 * @param client the credentials.
 * @returns the introspection response (RFC 7662 §2.2: `active`, and for an active token its claims).
 * @throws Error when the endpoint cannot be reached, times out ({@link OUTBOUND_TIMEOUT_MS}), answers other than
 *   200, or with something that is not a JSON object.
 */
export async function introspect(
  endpoint: string,
  token: string,
  client: IntrospectionClient,
): Promise<JWTPayload & { active?: unknown }> {
  const basic = Buffer.from(
    `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
    'utf8',
  ).toString('base64');
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    redirect: 'error',
    signal: AbortSignal.timeout(OUTBOUND_TIMEOUT_MS),
  });
  if (response.status !== 200) throw new Error(`introspection answered HTTP ${response.status}`);
  const body: unknown = await response.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error('introspection answered something other than a JSON object');
  return body as JWTPayload & { active?: unknown };
}
