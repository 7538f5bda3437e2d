/**
 * Claims to skills (`--auth-claims FILE`) with tokens from a real OpenID provider: a token sees the union of the
 * prefixes its `groups` match, a token matching nothing gets 403, a user whose groups change sees the new view with
 * the next token, and a listen stream ends when its token expires.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../helpers/live.js';
import { eventsOf } from '../helpers/logs.js';
import {
  clientCredentialsToken,
  craftToken,
  listedUris,
  listWith,
  type OAuthPair,
  startOAuthPair,
  stopOAuthPair,
} from '../helpers/oauth.js';
import { openListenStream, SAMPLE_SKILLS } from '../helpers/server.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const CLAIMS = {
  claims: [
    { name: 'billing', claim: 'groups', value: 'billing', prefixes: ['acme/billing'] },
    { name: 'support', claim: 'groups', value: 'support', prefixes: ['acme/support'] },
    { name: 'writers', claim: 'groups', value: 'writers', prefixes: ['report-writer'] },
    { name: 'ops', claim: 'realm_access.roles', value: 'admin', prefixes: ['*'] },
  ],
};

describe('--auth-claims', () => {
  let dir: string;
  let pair: OAuthPair;
  beforeAll(async () => {
    dir = await makeTempDir();
    const file = path.join(dir, 'claims.json');
    await fsp.writeFile(file, JSON.stringify(CLAIMS));
    pair = await startOAuthPair(['--auth-claims', file, SAMPLE_SKILLS]);
  });
  afterAll(async () => {
    await stopOAuthPair(pair);
    await removeTree(dir);
  });

  const listAs = async (groups: string[]): Promise<string[]> => {
    pair.provider.groups['skills-agent'] = groups;
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    const answer = await listWith(pair.server.url, `Bearer ${token}`);
    expect(answer.status).toBe(200);
    return listedUris(answer.body);
  };

  it('a token sees the skills under the prefixes of every group it holds', async () => {
    expect(await listAs(['billing'])).toEqual(['skill://acme/billing/refunds/SKILL.md']);
    expect(await listAs(['billing', 'writers'])).toEqual([
      'skill://acme/billing/refunds/SKILL.md',
      'skill://report-writer/SKILL.md',
    ]);
  });

  it('groups changed at the provider give the new view on the next token', async () => {
    expect(await listAs(['support'])).toEqual(['skill://acme/support/refunds/SKILL.md']);
    expect(await listAs(['billing'])).toEqual(['skill://acme/billing/refunds/SKILL.md']);
  });

  it('an opaque token is refused as such when no introspection is configured', async () => {
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.opaque, pair.server.url);
    expect(token.split('.')).toHaveLength(1);
    const answer = await listWith(pair.server.url, `Bearer ${token}`);
    expect(answer).toMatchObject({
      status: 401,
      challenge: `Bearer resource_metadata="${pair.metadataUrl}", error="invalid_token", error_description="the token is not a JWT, and this server does not introspect opaque tokens"`,
    });
    expect(answer.body).not.toContain('skill://');
  });

  it('a nested custom claim (realm_access.roles) maps too', async () => {
    const token = await craftToken(pair, { realm_access: { roles: ['admin'] } });
    expect(listedUris((await listWith(pair.server.url, `Bearer ${token}`)).body)).toHaveLength(6);
  });

  it('a token whose claims match no entry gets 403', async () => {
    pair.provider.groups['skills-agent'] = ['nobody'];
    const token = await clientCredentialsToken(pair.provider.issuer, pair.provider.clients.machine, pair.server.url);
    expect(await listWith(pair.server.url, `Bearer ${token}`)).toMatchObject({
      status: 403,
      challenge: `Bearer resource_metadata="${pair.metadataUrl}", error="insufficient_scope", scope="skills:read"`,
    });
  });

  it('ends a listen stream when its token expires', async () => {
    const token = await craftToken(pair, { groups: ['billing'], exp: Math.floor(Date.now() / 1000) + 2 });
    const { stream } = await openListenStream(pair.server.url, token, 'listen');
    expect(stream.ended).toBe(false);
    await waitFor(() => stream.ended, { describe: () => `the stream outlived its token: ${stream.text}` });
    // Ended, not cut: the client reads the end of the stream, and the server logs it as served.
    expect(stream.clean).toBe(true);
    await waitFor(() => eventsOf(pair.server.stderr(), 'request', { method: 'subscriptions/listen' }).length === 1);
    expect(eventsOf(pair.server.stderr(), 'request', { method: 'subscriptions/listen' })).toMatchObject([
      { outcome: 'ok', status: 200 },
    ]);
  });
});
