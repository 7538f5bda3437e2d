/**
 * The OAuth tests' pieces: the test OpenID provider (`scripts/test-oidc-provider.mjs`) next to a skills-serve started
 * with `--auth-issuer` it, tokens crafted with the provider's own signing key (a valid signature over claims a test
 * chooses), and one raw MCP request over HTTP.
 */
import { importJWK, type JWK, type JWTPayload, SignJWT } from 'jose';

import { startOidcProvider, type TestProvider } from '../../scripts/test-oidc-provider.mjs';
import { type HttpServer, startHttpServer } from './server.js';

export { authorizationCodeToken, clientCredentialsToken, signingKey } from '../../scripts/test-oidc-provider.mjs';

/** A provider and a server trusting it, with the resource set to the server's URL. */
export interface OAuthPair {
  readonly provider: TestProvider;
  readonly server: HttpServer;
  /** The resource metadata URL the server's challenges name. */
  readonly metadataUrl: string;
}

/**
 * Starts the provider, then skills-serve over `--http 0` with `--auth-issuer <provider>` and `args`.
 *
 * @param args more flags and the roots; `{ISSUER}`, `{CLIENT_ID}` and `{CLIENT_SECRET}` are replaced by the
 *   provider's issuer and its introspection client.
 */
export async function startOAuthPair(
  args: readonly string[],
  providerOptions: Parameters<typeof startOidcProvider>[0] = {},
): Promise<OAuthPair> {
  const provider = await startOidcProvider(providerOptions);
  const { client_id: id, client_secret: secret } = provider.clients.introspector;
  const server = await startHttpServer([
    '--auth-issuer',
    provider.issuer,
    ...args.map((arg) =>
      arg.replace('{ISSUER}', provider.issuer).replace('{CLIENT_ID}', id).replace('{CLIENT_SECRET}', secret),
    ),
  ]);
  provider.setResource(server.url);
  const url = new URL(server.url);
  return { provider, server, metadataUrl: `${url.origin}/.well-known/oauth-protected-resource/mcp` };
}

/** Stops both. */
export async function stopOAuthPair(pair: OAuthPair | undefined): Promise<void> {
  await pair?.server.stop();
  await pair?.provider.close();
}

/**
 * A JWT signed with a key (by default the provider's own), over the claims of a good token for `resource` with
 * `claims` merged in (`undefined` values removed).
 */
export async function craftToken(
  pair: OAuthPair,
  claims: Record<string, unknown> = {},
  header: { alg?: string; kid?: string; typ?: string } = {},
  key: JWK = pair.provider.keys[0] as JWK,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    iss: pair.provider.issuer,
    aud: pair.server.url,
    sub: 'crafted',
    client_id: 'skills-agent',
    scope: 'skills:read',
    iat: now,
    exp: now + 300,
    ...claims,
  };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  const alg = header.alg ?? 'RS256';
  return new SignJWT(payload)
    .setProtectedHeader({ alg, kid: header.kid ?? key.kid, typ: header.typ ?? 'at+jwt' })
    .sign(await importJWK(key, alg));
}

/** The answer to one raw 2025-era `skills/list` POST. */
export interface RawAnswer {
  readonly status: number;
  readonly challenge: string | null;
  readonly body: string;
}

/**
 * Sends one `skills/list` request with the given `Authorization` header (none when `undefined`).
 */
export async function listWith(url: string, authorization: string | undefined): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} }),
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.text() };
}

/** The skill URIs a `skills/list` SSE answer lists. */
export function listedUris(body: string): string[] {
  const data = /^data: (.*)$/mu.exec(body)?.[1];
  const result = (JSON.parse(data ?? '{}') as { result?: { skills?: { uri: string }[] } }).result;
  return (result?.skills ?? []).map(({ uri }) => uri);
}
