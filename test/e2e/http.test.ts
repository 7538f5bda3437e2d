/**
 * Streamable HTTP (`--http`): both eras verify every file with SkillsClient; two replicas on one tree publish
 * identical entries and accept each other's cursors; Host/Origin checks, bearer token, health endpoints, SIGTERM.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterEach, describe, expect, it } from 'vitest';

import { eventsOf, waitForEvent } from '../helpers/logs.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import {
  ANY_RESULT,
  type Era,
  eraClientOptions,
  ERAS,
  type HttpServer,
  SAMPLE_SKILLS,
  startHttpServer,
} from '../helpers/server.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';

let servers: HttpServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

async function start(args: readonly string[], env: Record<string, string> = {}): Promise<HttpServer> {
  const server = await startHttpServer(args, env);
  servers.push(server);
  return server;
}

async function connectHttp(url: string, era: Era = ERAS[1], headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'http-e2e', version: '1.0.0' }, eraClientOptions(era));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

describe.each([ERAS[1], ERAS[2]])('HTTP, era $label: the compat surfaces, request by request', (era) => {
  it('every request gets the four tools; only 2025-era ones get prompts and the catalog, declared or not', async () => {
    const server = await start(['--no-watch', SAMPLE_SKILLS]);
    const modern = era.label === '2026-07-28';
    const declarations: Record<string, Record<string, never>>[] = [{}, { 'io.modelcontextprotocol/skills': {} }];
    for (const extensions of declarations) {
      const client = new Client(
        { name: 'http-e2e', version: '1.0.0' },
        { ...eraClientOptions(era), capabilities: { extensions } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      clients.push(client);
      // Nothing is remembered between requests: listing skills first changes nothing.
      await new SkillsClient(client).list();
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['list_skills', 'search_skills', 'read_skill', 'read_skill_file']);
      expect(tools[2]?.description?.includes('Skills (name: description):')).toBe(!modern);
      expect((await client.listPrompts()).prompts).toHaveLength(modern ? 0 : 6);
    }
  });
});

describe.each([ERAS[1], ERAS[2]])('HTTP, era $label', (era) => {
  it('serves and verifies every file of sample-skills', async () => {
    const server = await start(['--no-watch', SAMPLE_SKILLS]);
    const skills = new SkillsClient(await connectHttp(server.url, era));
    const listing = await skills.list();
    expect(listing.skills.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
    for (const skill of listing.skills) {
      for (const resource of skill.resources as { uri: string }[])
        expect((await skills.read(skill, resource.uri)).verified).toBe(true);
    }
  });

  it('two replicas on the same tree publish identical entries, and a cursor from one pages on the other', async () => {
    const [one, two] = [
      await start(['--no-watch', '--page-size', '2', SAMPLE_SKILLS]),
      await start(['--no-watch', '--page-size', '2', SAMPLE_SKILLS]),
    ];
    const [a, b] = [await connectHttp(one.url, era), await connectHttp(two.url, era)];
    expect((await new SkillsClient(a).list()).skills).toEqual((await new SkillsClient(b).list()).skills);
    const uris: string[] = [];
    let cursor: string | undefined;
    let turn = 0;
    do {
      const client = turn++ % 2 === 0 ? a : b;
      const page = (await client.request(
        { method: 'skills/list', params: cursor === undefined ? {} : { cursor } },
        ANY_RESULT,
      )) as {
        skills: { uri: string }[];
        nextCursor?: string;
      };
      uris.push(...page.skills.map((skill) => skill.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(uris).toEqual(SAMPLE_SKILL_URIS);
  });
});

describe('HTTP live updates', () => {
  it('a 2026-07-28 client holding a listen stream hears list_changed and updated for subscribed URIs', async () => {
    const root = await makeTree({ 'a/SKILL.md': skillMd('a', 'Skill a.'), 'a/notes.md': 'v1\n' });
    try {
      const server = await start([root]);
      await waitForEvent(server.stderr, 'watching');
      const client = await connectHttp(server.url, ERAS[2]);
      const heard: string[] = [];
      client.setNotificationHandler('notifications/resources/list_changed', () => void heard.push('list_changed'));
      client.setNotificationHandler(
        'notifications/resources/updated',
        (notification) => void heard.push(`updated ${notification.params.uri}`),
      );
      const subscription = await client.listen({
        resourcesListChanged: true,
        resourceSubscriptions: ['skill://a/notes.md'],
      });
      try {
        await writeFile(path.join(root, 'a/notes.md'), 'v2, longer\n');
        await mkdir(path.join(root, 'b'));
        await writeFile(path.join(root, 'b/SKILL.md'), skillMd('b', 'Skill b.'));
        await waitFor(() => heard.includes('updated skill://a/notes.md') && heard.includes('list_changed'), {
          describe: () => `heard ${JSON.stringify(heard)}, not both "updated skill://a/notes.md" and "list_changed"`,
        });
        expect((await new SkillsClient(client).list()).skills.map((skill) => skill.uri)).toEqual([
          'skill://a/SKILL.md',
          'skill://b/SKILL.md',
        ]);
      } finally {
        await subscription.close();
      }
    } finally {
      await removeTree(root);
    }
  });
});

describe('HTTP endpoint', () => {
  it('answers health and readiness, 404 elsewhere, and refuses a foreign Host or Origin on a loopback bind', async () => {
    const server = await start(['--no-watch', SAMPLE_SKILLS]);
    const base = `http://127.0.0.1:${server.port}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ready', skills: 6, generation: 1 });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        body: initialize,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      });
    expect((await post({})).status).toBe(200);
    expect((await post({ origin: 'https://evil.example' })).status).toBe(403);
    // fetch does not let a page set Host; a raw request can, as a DNS-rebinding attacker's browser effectively does.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: `evil.example:${server.port}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.end(initialize);
    });
    expect(status).toBe(403);
    // Both refusals are counted and logged as every /mcp request is (their bodies unread: method unknown).
    await waitFor(() => eventsOf(server.stderr(), 'request', { status: 403 }).length === 2, {
      describe: () => server.stderr(),
    });
    expect(eventsOf(server.stderr(), 'request', { status: 403 })).toMatchObject([
      { method: 'unknown', outcome: 'forbidden' },
      { method: 'unknown', outcome: 'forbidden' },
    ]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^skills_serve_http_requests_total\{method="unknown",outcome="forbidden"\} 2$/mu);
  });

  it('requires the bearer token when one is set (flag or SKILLS_SERVE_HTTP_TOKEN)', async () => {
    const server = await start(['--no-watch', SAMPLE_SKILLS], { SKILLS_SERVE_HTTP_TOKEN: 's3cret-token' });
    await expect(connectHttp(server.url)).rejects.toThrow();
    await expect(connectHttp(server.url, ERAS[1], { authorization: 'Bearer wrong-token!' })).rejects.toThrow();
    const client = await connectHttp(server.url, ERAS[1], { authorization: 'Bearer s3cret-token' });
    expect((await new SkillsClient(client).list()).skills).toHaveLength(6);
    const unauthorized = await fetch(server.url, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="skills-serve"');
  });

  it('words every refusal of a static token the one way, and counts each reason from the start', async () => {
    const server = await start(['--no-watch', '--http-token', 's3cret-token', SAMPLE_SKILLS]);
    const refusals: [string | undefined, string][] = [];
    for (const authorization of [undefined, 'Basic czNjcmV0', 'Bearer wrong-token', `Bearer ${'a'.repeat(8193)}`]) {
      const response = await fetch(server.url, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(authorization === undefined ? {} : { authorization }),
        },
      });
      expect(response.status).toBe(401);
      // Kept longer than a load balancer keeps its idle connections (60 s): the server never closes one first.
      expect(response.headers.get('keep-alive')).toBe('timeout=65');
      refusals.push([response.headers.get('www-authenticate') ?? undefined, await response.text()]);
    }
    const body = (message: string): string =>
      `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized: ${message}"}}`;
    const invalid = (description: string): string =>
      `Bearer realm="skills-serve", error="invalid_token", error_description="${description}"`;
    expect(refusals).toEqual([
      ['Bearer realm="skills-serve"', body('send Authorization: Bearer <token>')],
      [
        invalid('the Authorization header is not one bearer token'),
        body('the Authorization header is not one bearer token'),
      ],
      [invalid('the token is not one this server accepts'), body('the token is not one this server accepts')],
      [
        invalid('the bearer token is longer than 8192 characters'),
        body('the bearer token is longer than 8192 characters'),
      ],
    ]);
    const metrics = await (await fetch(new URL('/metrics', server.url))).text();
    expect(
      [...metrics.matchAll(/^skills_serve_auth_failures_total\{reason="([a-z_]+)"\} (\d+)$/gmu)].map((m) => m.slice(1)),
    ).toEqual([
      ['missing', '1'],
      ['malformed', '1'],
      ['too_long', '1'],
      ['unknown_token', '1'],
    ]);
    // A refused request's body is not read: its method is unknown (a 2026-07-28 client names it in Mcp-Method).
    await waitFor(() => eventsOf(server.stderr(), 'request').length === 4);
    expect(eventsOf(server.stderr(), 'request').map((line) => [line['method'], line['refused']])).toEqual([
      ['unknown', 'missing'],
      ['unknown', 'malformed'],
      ['unknown', 'unknown_token'],
      ['unknown', 'too_long'],
    ]);
  });

  it('takes a token outside the bearer grammar as exactly "Bearer <token>", with one deprecation warning', async () => {
    const server = await start(['--no-watch', '--http-token', 'p@ss word!', SAMPLE_SKILLS]);
    const client = await connectHttp(server.url, ERAS[1], { authorization: 'Bearer p@ss word!' });
    expect((await new SkillsClient(client).list()).skills).toHaveLength(6);
    await expect(connectHttp(server.url, ERAS[1], { authorization: 'bearer p@ss word!' })).rejects.toThrow();
    expect(eventsOf(server.stderr(), 'deprecated').map((line) => line['msg'])).toEqual([
      '--http-token holds characters a bearer token may not (RFC 6750 §2.1 allows A-Z a-z 0-9 - . _ ~ + / and trailing =): it is still accepted as "Authorization: Bearer <token>", exactly, but is deprecated and will be refused in 0.3; use a token such as the output of "openssl rand -base64 32"',
    ]);
  });

  it('warns when bound to a non-loopback address without a token, and exits 0 on SIGTERM', async () => {
    const server = await start(['--http', '0.0.0.0:0', '--no-watch', SAMPLE_SKILLS]);
    expect(eventsOf(server.stderr(), 'http-open')).toMatchObject([{ level: 40, host: '0.0.0.0' }]);
    servers = [];
    expect(await server.stop()).toBe(0);
  });
});
