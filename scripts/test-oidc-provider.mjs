#!/usr/bin/env node
// A real OpenID provider (`oidc-provider`, OpenID Certified) on 127.0.0.1 for the tests and for docs/http.md's
// "Behind single sign-on": issues RS256 JWT access tokens (RFC 9068) and opaque ones for the resource skills-serve
// serves, through client credentials and through authorization code + PKCE, whose login and consent this script
// answers itself (as the account `--login`, with the groups given). Development only: in-memory storage, keys made at
// start.
//
//   node scripts/test-oidc-provider.mjs --resource http://127.0.0.1:8080/mcp [--port 9400] [--groups billing,shared]
//
// prints the issuer and the clients on stdout as one JSON line; `--token` instead prints one access token from the
// client credentials grant and exits, for `curl -H "Authorization: Bearer $(…)"`.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors } from 'oidc-provider';

/** The scopes the resource offers. */
export const SCOPES = ['skills:read', 'skills:write'];

/** A signing key as a private JWK, with `kid`, `alg` and `use`. */
export async function signingKey(kid = `k-${randomBytes(6).toString('hex')}`) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

/**
 * Starts the provider.
 *
 * @param {object} options
 * @param {string} [options.resource] the resource indicator tokens are issued for (skills-serve's `--auth-audience`);
 *   settable later with `setResource()`, for a server whose port is chosen when it starts.
 * @param {number} [options.port] 0 (default) picks a free port; the issuer is `http://127.0.0.1:<port>`.
 * @param {object[]} [options.keys] private JWKs (default: one new RS256 key); the first signs.
 * @param {Record<string, string[]>} [options.groups] `groups` claim per account or client id (changeable later:
 *   `provider.groups`).
 * @param {number} [options.ttl] access token lifetime (s), default 300.
 * @returns {Promise<{ issuer, port, keys, groups, clients, login(account), close() }>}
 */
export async function startOidcProvider({ resource = 'http://127.0.0.1/mcp', port = 0, keys, groups = {}, ttl = 300 }) {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const actual = server.address().port;
  const issuer = `http://127.0.0.1:${actual}`;
  const jwks = { keys: keys ?? [await signingKey()] };
  const secret = (name) => `${name}-${randomBytes(12).toString('hex')}`;
  const clients = {
    machine: { client_id: 'skills-agent', client_secret: secret('agent') },
    opaque: { client_id: 'skills-agent-opaque', client_secret: secret('opaque') },
    introspector: { client_id: 'skills-serve', client_secret: secret('serve') },
    host: { client_id: 'skills-host', redirect_uri: 'http://127.0.0.1/callback' },
  };
  const state = { groups: { ...groups }, account: 'alice', ttl, resource };
  const provider = new Provider(issuer, {
    clients: [
      ...[clients.machine, clients.opaque].map((client) => ({
        ...client,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: SCOPES.join(' '),
      })),
      { ...clients.introspector, grant_types: [], response_types: [], redirect_uris: [] },
      {
        client_id: clients.host.client_id,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [clients.host.redirect_uri],
        scope: SCOPES.join(' '),
      },
    ],
    jwks,
    scopes: SCOPES,
    pkce: { required: () => true },
    ttl: {
      AccessToken: () => state.ttl,
      ClientCredentials: () => state.ttl,
      Interaction: 600,
      Grant: 600,
      Session: 600,
      AuthorizationCode: 60,
    },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    extraTokenClaims: (_ctx, token) => ({ groups: state.groups[token.accountId ?? token.clientId] ?? [] }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // Only the resource server's own client may introspect.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client) => client.clientId === clients.introspector.client_id,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => state.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => {
          if (indicator !== state.resource)
            throw new errors.InvalidTarget(`this provider issues tokens for ${state.resource} only, not ${indicator}`);
          return {
            scope: SCOPES.join(' '),
            audience: state.resource,
            accessTokenTTL: state.ttl,
            accessTokenFormat: client.clientId === clients.opaque.client_id ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  // The interaction (login and consent) is answered at once: the account is `state.account`, and it grants the
  // requested scopes of the resource.
  provider.use(async (ctx, next) => {
    if (!/^\/interaction\/[^/]+$/u.test(ctx.path)) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const accountId = state.account;
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    const requested = String(details.params.scope ?? '')
      .split(' ')
      .filter((scope) => SCOPES.includes(scope));
    grant.addResourceScope(details.params.resource ?? state.resource, requested.join(' '));
    // The resource's scopes are listed among the provider's scopes too (client credentials asks for them), so the
    // consent prompt wants them granted as such as well.
    grant.addOIDCScope(String(details.params.scope ?? ''));
    const grantId = await grant.save();
    await provider.interactionFinished(
      ctx.req,
      ctx.res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    return undefined;
  });
  const callback = provider.callback();
  server.on('request', callback);
  return {
    issuer,
    port: actual,
    keys: jwks.keys,
    groups: state.groups,
    clients,
    /** Sets the account the next authorization code flow logs in as. */
    login(account) {
      state.account = account;
    },
    /** Sets the resource tokens are issued for from now on. */
    setResource(url) {
      state.resource = url;
    },
    /** Sets the lifetime (s) of tokens issued from now on. */
    setTtl(seconds) {
      state.ttl = seconds;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An access token through the client credentials grant (RFC 6749 §4.4, resource per RFC 8707).
 *
 * @returns {Promise<string>}
 */
export async function clientCredentialsToken(issuer, { client_id, client_secret }, resource, scope = 'skills:read') {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * An access token through authorization code + PKCE (RFC 6749 §4.1, RFC 7636 S256), following the redirects a
 * browser would, with a cookie jar, as the account last set with `login()`.
 *
 * @returns {Promise<string>}
 */
export async function authorizationCodeToken(issuer, { client_id, redirect_uri }, resource, scope = 'skills:read') {
  const { createHash } = await import('node:crypto');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(8).toString('hex');
  const jar = new Map();
  let url = `${issuer}/auth?${new URLSearchParams({
    client_id,
    redirect_uri,
    response_type: 'code',
    scope,
    resource,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(redirect_uri)) break;
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location === null) throw new Error(`authorization stopped at ${url}: HTTP ${response.status}`);
    url = new URL(location, url).href;
  }
  const answer = new URL(url).searchParams;
  if (answer.get('state') !== state || answer.get('code') === null)
    throw new Error(`authorization failed: ${answer.toString()}`);
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: answer.get('code'),
      redirect_uri,
      client_id,
      code_verifier: verifier,
      resource,
    }).toString(),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

const USAGE = `usage: node scripts/test-oidc-provider.mjs [--port 9400] [--resource http://127.0.0.1:8080/mcp] [--groups a,b]
       node scripts/test-oidc-provider.mjs --token <issuer>,<client_id>,<client_secret> [--resource <url>]
The first starts the provider and prints its issuer and clients as one JSON line; the second asks a running one for
an access token (client credentials) and prints it.`;

if (import.meta.url === `file://${process.argv[1]}`) {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        resource: { type: 'string', default: 'http://127.0.0.1:8080/mcp' },
        port: { type: 'string', default: '9400' },
        groups: { type: 'string', default: '' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.token !== undefined) {
    // --token <issuer>,<id>,<secret>: ask a running provider for a token (the secret is the one it printed).
    const [issuer, id, secret] = values.token.split(',');
    if (secret === undefined) {
      process.stderr.write(`--token takes <issuer>,<client_id>,<client_secret>\n${USAGE}\n`);
      process.exit(2);
    }
    try {
      const token = await clientCredentialsToken(issuer, { client_id: id, client_secret: secret }, values.resource);
      process.stdout.write(`${token}\n`);
    } catch (error) {
      process.stderr.write(`no token from ${issuer}: ${error.cause?.message ?? error.message}\n`);
      process.exit(1);
    }
    process.exit(0);
  }
  const port = Number(values.port);
  if (!/^\d+$/u.test(values.port) || port > 65535) {
    process.stderr.write(`--port takes a port number, 0 to 65535 (got "${values.port}")\n${USAGE}\n`);
    process.exit(2);
  }
  const groups = values.groups === '' ? [] : values.groups.split(',');
  let provider;
  try {
    provider = await startOidcProvider({
      resource: values.resource,
      port,
      groups: { 'skills-agent': groups, 'skills-agent-opaque': groups, alice: groups },
    });
  } catch (error) {
    const reason = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
    process.stderr.write(`cannot serve the OpenID provider on 127.0.0.1:${port}: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ issuer: provider.issuer, clients: provider.clients })}\n`);
  process.stderr.write(`OpenID provider at ${provider.issuer} for ${values.resource}; Ctrl-C stops it\n`);
  process.on('SIGINT', () => void provider.close().then(() => process.exit(0)));
  process.on('SIGTERM', () => void provider.close().then(() => process.exit(0)));
}
