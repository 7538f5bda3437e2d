/**
 * The OAuth 2.0 resource server (`--auth-issuer`) against a real OpenID provider (`oidc-provider`, started on
 * 127.0.0.1 by `scripts/test-oidc-provider.mjs`), over real HTTP: Protected Resource Metadata, the 401/403
 * challenges, tokens from client credentials and from authorization code + PKCE, opaque tokens by introspection,
 * every bad-token case, a fuzz of malformed `Authorization` headers, keys rotated and the issuer gone, and
 * `--http-token` beside it.
 */
import { Agent, request as httpRequest } from 'node:http';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { AUTH_FAILURES } from '../../src/transports/auth/challenge.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf, waitForEvent } from '../helpers/logs.js';
import {
  authorizationCodeToken,
  clientCredentialsToken,
  craftToken,
  listedUris,
  listWith,
  type OAuthPair,
  signingKey,
  startOAuthPair,
  stopOAuthPair,
} from '../helpers/oauth.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { eraClientOptions, ERAS, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';

const ALL_SKILLS = SAMPLE_SKILL_URIS;
const STATIC = 'static-token-0123456789abcdef';

/** The challenge of an invalid token (RFC 6750 §3.1) with its description. */
const invalid = (pair: OAuthPair, description: string): string =>
  `Bearer resource_metadata="${pair.metadataUrl}", error="invalid_token", error_description="${description}"`;

describe('--auth-issuer against a real OpenID provider', () => {
  let pair: OAuthPair;
  beforeAll(async () => {
    pair = await startOAuthPair([
      '--auth-client-id',
      '{CLIENT_ID}',
      '--auth-client-secret',
      '{CLIENT_SECRET}',
      '--http-token',
      STATIC,
      SAMPLE_SKILLS,
    ]);
  });
  afterAll(() => stopOAuthPair(pair));

  it('publishes Protected Resource Metadata at the well-known path and its /mcp-suffixed form (RFC 9728)', async () => {
    const origin = new URL(pair.server.url).origin;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual({
        resource: pair.server.url,
        authorization_servers: [pair.provider.issuer],
        scopes_supported: ['skills:read'],
        bearer_methods_supported: ['header'],
        resource_name: 'skills-serve',
      });
    }
  });

  it('answers a request without a token 401 with WWW-Authenticate naming the metadata', async () => {
    expect(await listWith(pair.server.url, undefined)).toEqual({
      status: 401,
      challenge: `Bearer resource_metadata="${pair.metadataUrl}"`,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Unauthorized: send Authorization: Bearer <token>' },
      }),
    });
  });

  it.each(ERAS.slice(1))('a client credentials JWT serves every skill through the SDK client ($label)', async (era) => {
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    const client = new Client({ name: 'oauth-test', version: '1' }, eraClientOptions(era));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(pair.server.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const skills = new SkillsClient(client);
    const listed = (await skills.list()).skills;
    expect(listed.map((skill) => skill.uri).sort()).toEqual(ALL_SKILLS);
    const writer = listed.find((skill) => skill.uri === 'skill://report-writer/SKILL.md');
    expect((await skills.read(writer!, 'skill://report-writer/SKILL.md')).verified).toBe(true);
    await client.close();
  });

  it('a token from authorization code + PKCE is accepted', async () => {
    pair.provider.login('alice');
    const token = await authorizationCodeToken(pair.provider.issuer, pair.provider.clients.host, pair.server.url);
    const answer = await listWith(pair.server.url, `Bearer ${token}`);
    expect(answer.status).toBe(200);
    expect(listedUris(answer.body).sort()).toEqual(ALL_SKILLS);
  });

  it('an opaque token is introspected (RFC 7662) and accepted; an unknown opaque token is not', async () => {
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.opaque, pair.server.url);
    expect(token.split('.')).toHaveLength(1);
    const answer = await listWith(pair.server.url, `Bearer ${token}`);
    expect(answer.status).toBe(200);
    expect(listedUris(answer.body).sort()).toEqual(ALL_SKILLS);
    expect(await listWith(pair.server.url, 'Bearer not-a-token-the-provider-issued')).toMatchObject({
      status: 401,
      challenge: invalid(pair, 'the token is not active'),
    });
  });

  it('--http-token keeps working beside --auth-issuer', async () => {
    const answer = await listWith(pair.server.url, `Bearer ${STATIC}`);
    expect(answer.status).toBe(200);
    expect(listedUris(answer.body).sort()).toEqual(ALL_SKILLS);
  });

  it('a token without the required scope gets 403 insufficient_scope naming the scope', async () => {
    const token = await clientCredentialsToken(
      pair.provider.issuer,
      pair.provider.clients.machine,
      pair.server.url,
      'skills:write',
    );
    expect(await listWith(pair.server.url, `Bearer ${token}`)).toEqual({
      status: 403,
      challenge: `Bearer resource_metadata="${pair.metadataUrl}", error="insufficient_scope", scope="skills:read"`,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Forbidden: the token lacks a required scope' },
      }),
    });
  });

  it('a token within the clock skew (expired 2 s ago) is still accepted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const answer = await listWith(pair.server.url, `Bearer ${await craftToken(pair, { exp: now - 2 })}`);
    expect(answer.status).toBe(200);
  });

  /** Each refused token: how it is made, and the description its 401 gives. */
  const BAD: [string, (pair: OAuthPair) => Promise<string>, string][] = [
    ['expired', (p) => craftToken(p, { exp: now() - 60 }), 'the token has expired'],
    [
      'longer than 8 KiB (a good one, padded)',
      (p) => craftToken(p, { pad: 'x'.repeat(7_000) }),
      'the bearer token is longer than 8192 characters',
    ],
    ['not valid yet (nbf)', (p) => craftToken(p, { nbf: now() + 60 }), 'the token is not valid yet'],
    [
      'issued in the future (iat a minute ahead)',
      (p) => craftToken(p, { iat: now() + 60 }),
      'the token is not valid yet',
    ],
    ['without exp', (p) => craftToken(p, { exp: undefined }), 'the token has no exp, or a claim of the wrong type'],
    [
      'with an iat that is not a number',
      (p) => craftToken(p, { iat: 'x' }),
      'the token has no exp, or a claim of the wrong type',
    ],
    [
      'with an exp that is not a number',
      (p) => craftToken(p, { exp: 'soon' }),
      'the token has no exp, or a claim of the wrong type',
    ],
    [
      'for another audience',
      (p) => craftToken(p, { aud: 'https://other.example/mcp' }),
      'the token was not issued for this resource',
    ],
    [
      'from an untrusted issuer',
      (p) => craftToken(p, { iss: 'https://evil.example' }),
      'the token was not issued by a trusted authorization server',
    ],
    [
      'with alg none',
      async (p) => {
        const good = await craftToken(p);
        const [, payload] = good.split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
        return `${header}.${payload}.`;
      },
      'the token is not signed with an accepted asymmetric algorithm',
    ],
    [
      'with alg none and a signature',
      async (p) => {
        const good = await craftToken(p);
        const [, payload, signature] = good.split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
        return `${header}.${payload}.${signature}`;
      },
      'the token is not signed with an accepted asymmetric algorithm',
    ],
    [
      'HS256 keyed with the public key (HS/RS confusion)',
      async (p) => {
        const {
          d: _d,
          p: _p,
          q: _q,
          dp: _dp,
          dq: _dq,
          qi: _qi,
          ...publicJwk
        } = p.provider.keys[0] as unknown as Record<string, string>;
        const secret = { kty: 'oct', k: Buffer.from(JSON.stringify(publicJwk)).toString('base64url') };
        return craftToken(p, {}, { alg: 'HS256', kid: p.provider.keys[0]?.kid }, secret);
      },
      'the token is not signed with an accepted asymmetric algorithm',
    ],
    [
      'signed by a key the issuer does not publish (unknown kid)',
      async (p) => craftToken(p, {}, { kid: 'unknown-kid' }, await signingKey('unknown-kid')),
      "the token's signing key is not among the issuer's keys",
    ],
    [
      'signed by another key under the issuer key id',
      async (p) => {
        const { privateKey } = await generateKeyPair('RS256', { extractable: true });
        return craftToken(p, {}, {}, { ...(await exportJWK(privateKey)), kid: p.provider.keys[0]?.kid });
      },
      'the token signature does not verify',
    ],
    [
      'with its payload changed after signing',
      async (p) => {
        const [header, , signature] = (await craftToken(p)).split('.');
        const payload = Buffer.from(
          JSON.stringify({ iss: p.provider.issuer, aud: p.server.url, scope: 'skills:read', exp: now() + 600 }),
        ).toString('base64url');
        return `${header}.${payload}.${signature}`;
      },
      'the token signature does not verify',
    ],
    // Not introspected: an authorization server refuses to introspect what looks like a JWT (unsupported_token_type).
    [
      'of three parts that is not a JWT',
      async () => 'e30.bm90IGpzb24.c2ln',
      'the token has three parts but is not a JWT',
    ],
  ];

  it.each(BAD)('refuses a token %s with 401 and serves nothing', async (_name, make, description) => {
    const token = await make(pair);
    const answer = await listWith(pair.server.url, `Bearer ${token}`);
    expect(answer).toMatchObject({ status: 401, challenge: invalid(pair, description) });
    expect(answer.body).not.toContain('skill://');
  });

  it('refuses two Authorization headers whichever comes first, a good token or the static one among them', async () => {
    const good = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    const malformed = invalid(pair, 'the Authorization header is not one bearer token');
    for (const headers of [
      [`Bearer ${good}`, 'Bearer garbage'],
      ['Bearer garbage', `Bearer ${good}`],
      [`Bearer ${good}`, `Bearer ${good}`],
      [`Bearer ${STATIC}`, 'Bearer garbage'],
    ]) {
      const answer = await listWithHeaders(pair.server.url, headers);
      expect(answer, headers.join(' | ')).toMatchObject({ status: 401, challenge: malformed });
      expect(answer.body).not.toContain('skill://');
    }
    // Each alone is served.
    expect((await listWith(pair.server.url, `Bearer ${good}`)).status).toBe(200);
    expect((await listWith(pair.server.url, `Bearer ${STATIC}`)).status).toBe(200);
  });

  it('a kept token is served in every spelling RFC 6750 allows, from the first request on, and in no other', async () => {
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    const malformed = invalid(pair, 'the Authorization header is not one bearer token');
    // Twice each: the first of the canonical spelling is verified and kept; every later one is answered from that.
    for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`, `Bearer ${token}`]) {
      for (let time = 0; time < 2; time++) {
        const answer = await listWith(pair.server.url, header);
        expect(answer.status, header.slice(0, 10)).toBe(200);
        expect(listedUris(answer.body)).toEqual(ALL_SKILLS);
      }
    }
    // The kept token inside anything else is not it (whitespace around the value is not the value: HTTP trims it).
    const refused = [malformed, invalid(pair, 'the token signature does not verify')];
    for (const header of [
      `Bearer ${token}x`,
      `Bearer ${token}=`,
      `Bearer ${token},`,
      `Bearer ${token} x`,
      `Bearer${token}`,
      `Bearer\t${token}`,
      `Token ${token}`,
      `Bearer ${token.slice(0, -1)}`,
    ]) {
      const answer = await listWith(pair.server.url, header);
      expect(answer.status, `${header.slice(0, 8)}…${header.slice(-3)}`).toBe(401);
      expect(refused).toContain(answer.challenge);
      expect(answer.body).not.toContain('skill://');
    }
  });

  it('refuses a token once it has expired on the keep-alive connection that was admitted with it', async () => {
    const token = await craftToken(pair, { exp: Math.floor(Date.now() / 1000) + 2 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await listWithHeaders(pair.server.url, [`Bearer ${token}`], agent)).toMatchObject({ status: 200 });
      let last: Awaited<ReturnType<typeof listWithHeaders>> | undefined;
      // Served until `exp` and 5 s of skew have passed, then refused, on the same connection.
      await waitFor(
        async () => {
          last = await listWithHeaders(pair.server.url, [`Bearer ${token}`], agent);
          return last.status !== 200;
        },
        { intervalMs: 200, describe: () => `still ${last?.status}` },
      );
      expect(last).toMatchObject({ status: 401, challenge: invalid(pair, 'the token has expired'), reused: true });
      expect(last?.body).not.toContain('skill://');
    } finally {
      agent.destroy();
    }
  });

  it('/metrics counts requests, auth failures and the catalog; one access log line per request, never the token', async () => {
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    expect((await listWith(pair.server.url, `Bearer ${token}`)).status).toBe(200);
    expect((await listWith(pair.server.url, undefined)).status).toBe(401);
    const anonymous = await craftToken(pair, { sub: undefined, client_id: undefined });
    expect((await listWith(pair.server.url, `Bearer ${anonymous}`)).status).toBe(200);
    const response = await fetch(new URL('/metrics', pair.server.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(text).toMatch(/^skills_serve_http_requests_total\{method="skills\/list",outcome="ok"\} [1-9]\d*$/mu);
    expect(text).toMatch(/^skills_serve_auth_failures_total\{reason="missing"\} [1-9]\d*$/mu);
    // Every reason is a series from the start (this server has no --auth-claims, so none is refused for no_view), but
    // unknown_token: with --auth-issuer every token is judged.
    const reasons = [...text.matchAll(/^skills_serve_auth_failures_total\{reason="([a-z_]+)"\} \d+$/gmu)];
    expect(reasons.map((match) => match[1]).sort()).toEqual(
      AUTH_FAILURES.filter((reason) => reason !== 'unknown_token').sort(),
    );
    expect(text).toMatch(/^skills_serve_auth_failures_total\{reason="no_view"\} 0$/mu);
    expect(text).toMatch(/^skills_serve_catalog_skills 6$/mu);
    expect(text).toMatch(/^skills_serve_catalog_generation [1-9]\d*$/mu);
    expect(text).toMatch(/^skills_serve_listen_streams 0$/mu);
    expect(text).toMatch(
      /^skills_serve_http_request_duration_seconds_bucket\{le="0.001",method="skills\/list",outcome="ok"\} \d+$/mu,
    );
    const lines = eventsOf(pair.server.stderr(), 'request');
    expect(lines.some((line) => line['subject'] === 'skills-agent' && line['outcome'] === 'ok')).toBe(true);
    expect(
      lines.some(
        (line) => line['subject'] === undefined && line['outcome'] === 'unauthorized' && line['refused'] === 'missing',
      ),
    ).toBe(true);
    expect(lines.filter((line) => line['outcome'] === 'ok' && 'refused' in line)).toEqual([]);
    // A token with neither sub nor client_id is logged without a subject (not an empty one).
    expect(lines.filter((line) => line['subject'] === '')).toEqual([]);
    expect(pair.server.stderr()).not.toContain(token);
    expect(pair.server.stderr()).not.toContain(STATIC);
  });

  it('/livez, /healthz and /readyz answer without a token and without counts', async () => {
    for (const path of ['/livez', '/healthz', '/readyz']) {
      const response = await fetch(new URL(path, pair.server.url));
      expect(response.status).toBe(200);
      expect(Object.keys((await response.json()) as object)).toEqual(['status', 'generation']);
    }
  });

  it('serves none of 10,000 malformed Authorization headers', async () => {
    const headers = malformedHeaders(10_000, pair);
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < headers.length) {
          const header = headers[next++] as string;
          const { status, body } = await listWith(pair.server.url, header);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (body.includes('skill://')) statuses.set(-1, (statuses.get(-1) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 401: 10_000 });
  }, 120_000);
});

/**
 * `skills/list` with each of `authorizations` sent as its own `Authorization` header line (fetch would join them into
 * one line).
 */
function listWithHeaders(
  url: string,
  authorizations: readonly string[],
  agent?: Agent,
): Promise<{ status: number | undefined; challenge: string | undefined; body: string; reused: boolean }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        ...(agent === undefined ? {} : { agent }),
        // Raw [name, value, …] pairs: one header line each (and no Host added by Node).
        headers: [
          'host',
          new URL(url).host,
          'content-type',
          'application/json',
          'accept',
          'application/json, text/event-stream',
          'mcp-protocol-version',
          '2025-11-25',
          ...authorizations.flatMap((value) => ['authorization', value]),
        ],
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            challenge: response.headers['www-authenticate'],
            body: text,
            reused: request.reusedSocket,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Seconds since the epoch. */
function now(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * Malformed `Authorization` values from a seeded generator: wrong schemes, broken syntax, truncated and mutated
 * good tokens, random bytes, overlong values (all printable ASCII, which is what HTTP carries).
 */
function malformedHeaders(count: number, pair: OAuthPair): string[] {
  let seed = 20;
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };
  const printable = (length: number): string =>
    Array.from({ length }, () => String.fromCharCode(32 + random(95))).join('');
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const token = (length: number): string => Array.from({ length }, () => b64[random(64)]).join('');
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: pair.provider.keys[0]?.kid })).toString('base64url');
  const payload = Buffer.from(
    JSON.stringify({ iss: pair.provider.issuer, aud: pair.server.url, scope: 'skills:read', exp: now() + 600 }),
  ).toString('base64url');
  const shapes: (() => string)[] = [
    () => printable(1 + random(80)),
    () => `Bearer ${printable(1 + random(80))}`,
    () => `Basic ${token(20)}`,
    () => `bearer${token(30)}`,
    () => `Bearer ${token(10)} ${token(10)}`,
    () => `Bearer ${token(40)}`,
    () => `Bearer ${header}.${payload}.${token(342)}`,
    () => `Bearer ${header}.${payload}`,
    () => `Bearer ${header}..${token(20)}`,
    () => `Bearer ${token(5)}.${token(5)}.${token(5)}`,
    () => `Bearer  ${STATIC.slice(0, -1)}`,
    () => `Bearer ${STATIC}x`,
    () => `Token ${STATIC}`,
    () => `Bearer ${token(9000)}`,
    () => `Bearer ${header}.${payload}.${token(342)}, Bearer ${STATIC}`,
  ];
  return Array.from({ length: count }, () => (shapes[random(shapes.length)] as () => string)());
}

describe('keys rotated, and the issuer unreachable', () => {
  let pair: OAuthPair;
  beforeAll(async () => {
    pair = await startOAuthPair([SAMPLE_SKILLS]);
  });
  afterAll(() => stopOAuthPair(pair));

  it('takes a new signing key without a restart, serves with kept keys while the issuer is down, then fails closed', async () => {
    const first = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    expect((await listWith(pair.server.url, `Bearer ${first}`)).status).toBe(200);
    // The provider restarts on the same issuer with a new key first (the old one still published).
    const old = pair.provider.keys[0];
    await pair.provider.close();
    const fresh = await signingKey('rotated');
    const rotated = await startOAuthProvider(pair, [fresh, old]);
    const second = await clientCredentialsToken(rotated.issuer, rotated.clients.machine, pair.server.url);
    await waitFor(async () => (await listWith(pair.server.url, `Bearer ${second}`)).status === 200, {
      describe: () => 'a token signed with the rotated key was never accepted',
    });
    await rotated.close();
    // Issuer gone: a token signed with a kept key still verifies; one naming a key nobody kept fails closed.
    const kept = await craftToken(pair, {}, {}, fresh);
    expect((await listWith(pair.server.url, `Bearer ${kept}`)).status).toBe(200);
    const unknown = await craftToken(pair, {}, { kid: 'never-published' }, await signingKey('never-published'));
    await waitFor(
      async () =>
        (await listWith(pair.server.url, `Bearer ${unknown}`)).challenge ===
        invalid(pair, "the issuer's keys cannot be fetched"),
      { describe: () => 'an unknown key while the issuer is down did not fail closed as keys_unavailable' },
    );
  });
});

/** Starts the provider again on the pair's issuer port with these keys (its state is in memory: a new one). */
async function startOAuthProvider(pair: OAuthPair, keys: unknown[]) {
  const { startOidcProvider } = await import('../../scripts/test-oidc-provider.mjs');
  const provider = await startOidcProvider({
    port: pair.provider.port,
    keys: keys as Parameters<typeof startOidcProvider>[0]['keys'],
    resource: pair.server.url,
  });
  Object.assign(pair.provider.keys, provider.keys);
  return provider;
}

describe('an issuer that is not up when the server starts', () => {
  it('keeps /readyz at 503 (every token would be refused) until a probe finds the issuer, then serves', async () => {
    // A port nobody listens on now; the provider takes it later.
    const { createServer } = await import('node:net');
    const probe = createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const issuer = `http://127.0.0.1:${port}`;
    const server = await startHttpServer(['--auth-issuer', issuer, SAMPLE_SKILLS]);
    const { startOidcProvider } = await import('../../scripts/test-oidc-provider.mjs');
    let provider: Awaited<ReturnType<typeof startOidcProvider>> | undefined;
    try {
      await waitForEvent(server.stderr, 'auth-issuer-unreachable', { issuer });
      const ready = async () => {
        const response = await fetch(new URL('/readyz', server.url));
        return { status: response.status, body: await response.json() };
      };
      expect(await ready()).toEqual({ status: 503, body: { status: 'issuer_unreachable', generation: 1 } });
      expect((await fetch(new URL('/livez', server.url))).status).toBe(200);
      provider = await startOidcProvider({ port, resource: server.url });
      // The probe itself tries the issuer again (after the 10 s retry delay of a failed discovery).
      let last: Awaited<ReturnType<typeof ready>> | undefined;
      await waitFor(async () => (last = await ready()).status === 200, {
        timeoutMs: 30_000,
        intervalMs: 250,
        describe: () => `readyz still ${JSON.stringify(last)}`,
      });
      expect(last).toEqual({ status: 200, body: { status: 'ready', generation: 1 } });
      await waitForEvent(server.stderr, 'auth-issuer-discovered', { issuer });
      const token = await clientCredentialsToken(provider.issuer, provider.clients.machine, server.url);
      expect(listedUris((await listWith(server.url, `Bearer ${token}`)).body).sort()).toEqual(ALL_SKILLS);
    } finally {
      await server.stop();
      await provider?.close();
    }
  });
});
