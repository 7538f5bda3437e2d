/**
 * Per-team visibility over HTTP (`--http-tokens FILE`), with the official client on real HTTP (127.0.0.1): each token
 * lists, gets, reads and lists directories of only the skills under its prefixes; everything else is answered exactly
 * as an absent skill is (same code, same message), so nothing leaks existence; an unknown token gets 401; the file
 * is read again when it changes. Both eras.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf } from '../helpers/logs.js';
import {
  ANY_RESULT,
  eraClientOptions,
  ERAS,
  type HttpServer,
  openListenStream,
  SAMPLE_SKILLS,
  startHttpServer,
} from '../helpers/server.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const BILLING = 'billing-token-0123456789';
const EVERYONE = 'everyone-token-0123456789';
/** The tokens file each era's run starts from (and restores after moving a token). */
const INITIAL_TOKENS = JSON.stringify({
  tokens: [
    { name: 'billing', token: BILLING, prefixes: ['acme/billing'] },
    { name: 'everyone', token: EVERYONE, prefixes: ['*'] },
  ],
});
const LATER = 'later-token-0123456789abc';

async function clientFor(
  server: HttpServer,
  token: string,
  era: (typeof ERAS)[number],
): Promise<{ client: Client; skills: SkillsClient }> {
  const client = new Client({ name: 'tokens-test', version: '1' }, eraClientOptions(era));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return { client, skills: new SkillsClient(client) };
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as { code: number; message: string };
    return { code, message };
  }
  throw new Error('expected an error');
}

describe.each([ERAS[1], ERAS[2]])('--http-tokens, era $label', (era) => {
  let dir: string;
  let file: string;
  let server: HttpServer;
  beforeAll(async () => {
    dir = await makeTempDir();
    file = path.join(dir, 'tokens.json');
    await fsp.writeFile(file, INITIAL_TOKENS);
    server = await startHttpServer(['--http-tokens', file, SAMPLE_SKILLS]);
  });
  afterAll(async () => {
    await server.stop();
    await removeTree(dir);
  });

  it('each token sees exactly its skills; what it may not see answers as what does not exist', async () => {
    const billing = await clientFor(server, BILLING, era);
    const everyone = await clientFor(server, EVERYONE, era);
    try {
      expect((await billing.skills.list()).skills.map((skill) => skill.uri)).toEqual([
        'skill://acme/billing/refunds/SKILL.md',
      ]);
      expect((await everyone.skills.list()).skills).toHaveLength(6);
      const refunds = (await billing.skills.list()).skills[0]!;
      expect((await billing.skills.read(refunds, 'skill://acme/billing/refunds/SKILL.md')).verified).toBe(true);

      // A skill of another team: the same answers as for one that does not exist.
      const hidden = 'skill://acme/support/refunds/SKILL.md';
      const absent = 'skill://acme/nothing/here/SKILL.md';
      const get = async (uri: string) =>
        errorOf(billing.client.request({ method: 'skills/get', params: { uri } }, ANY_RESULT));
      expect(await get(hidden)).toEqual({
        ...(await get(absent)),
        message: (await get(absent)).message.replace(absent, hidden),
      });
      const read = async (uri: string) => errorOf(billing.client.readResource({ uri }));
      expect((await read(hidden)).code).toBe(-32602);
      expect((await read(hidden)).message).toBe((await read(absent)).message.replace(absent, hidden));
      // The grouping directory lists only the way to what the token sees.
      const acme = (await billing.client.request(
        { method: 'resources/directory/read', params: { uri: 'skill://acme' } },
        ANY_RESULT,
      )) as { resources: { uri: string }[] };
      expect(acme.resources.map((resource) => resource.uri)).toEqual(['skill://acme/billing']);
      const dirError = await errorOf(
        billing.client.request(
          { method: 'resources/directory/read', params: { uri: 'skill://acme/support' } },
          ANY_RESULT,
        ),
      );
      expect(dirError).toEqual({
        code: -32602,
        message: expect.stringContaining('skill://acme/support is not a directory resource'),
      });
    } finally {
      await billing.client.close();
      await everyone.client.close();
    }
  });

  it('the compat surfaces (instructions, tools, prompts, search) name only the skills of the token', async () => {
    // A host without the extension: it never calls skills/list, so it is offered the compat surfaces.
    const billing = await clientFor(server, BILLING, era);
    try {
      expect(billing.client.getInstructions()).not.toContain('skill://');
      // 2025-era requests get read_skill's catalog and the prompts, of the token's skills only; a 2026-07-28 host may
      // list skills itself, and gets neither.
      const description =
        (await billing.client.listTools()).tools.find((tool) => tool.name === 'read_skill')?.description ?? '';
      const modern = era.label === '2026-07-28';
      expect(description.includes('\n- refunds: Process refunds in the Acme billing system')).toBe(!modern);
      expect(description).not.toContain('Handle customer refund requests');
      const listed = (await billing.client.callTool({ name: 'list_skills', arguments: {} })).structuredContent as {
        skills: { uri: string }[];
      };
      expect(listed.skills.map((skill) => skill.uri)).toEqual(['skill://acme/billing/refunds/SKILL.md']);
      const found = (await billing.client.callTool({ name: 'search_skills', arguments: { query: 'refund' } }))
        .structuredContent as { skills: { uri: string }[] };
      expect(found.skills.map((skill) => skill.uri)).toEqual(['skill://acme/billing/refunds/SKILL.md']);
      expect((await billing.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(
        modern ? [] : ['refunds'],
      );
      const hidden = await billing.client.callTool({
        name: 'read_skill',
        arguments: { uri: 'skill://acme/support/refunds/SKILL.md' },
      });
      const absent = await billing.client.callTool({
        name: 'read_skill',
        arguments: { uri: 'skill://acme/nothing/SKILL.md' },
      });
      expect(hidden.isError).toBe(true);
      expect(hidden.content).toEqual(
        JSON.parse(
          JSON.stringify(absent.content).replaceAll(
            'skill://acme/nothing/SKILL.md',
            'skill://acme/support/refunds/SKILL.md',
          ),
        ),
      );
      const file = await billing.client.callTool({
        name: 'read_skill_file',
        arguments: { uri: 'skill://acme/support/refunds/SKILL.md' },
      });
      expect(file.isError).toBe(true);
    } finally {
      await billing.client.close();
    }
  });

  it('refuses an unknown token with 401, and follows the file when it changes', async () => {
    const refused = await fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${LATER}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    await fsp.writeFile(
      file,
      JSON.stringify({ tokens: [{ name: 'later', token: LATER, prefixes: ['data-pipeline'] }] }),
    );
    await waitFor(async () => {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${LATER}` },
        body: '{}',
      });
      return answer.status !== 401;
    });
    const later = await clientFor(server, LATER, era);
    try {
      expect((await later.skills.list()).skills.map((skill) => skill.uri)).toEqual([
        'skill://data-pipeline/SKILL.md',
        'skill://data-pipeline/csv-cleaning/SKILL.md',
      ]);
    } finally {
      await later.client.close();
    }
    // The same token name with other prefixes: its pages are its new view's, not the old one's.
    await fsp.writeFile(
      file,
      JSON.stringify({ tokens: [{ name: 'billing', token: BILLING, prefixes: ['pdf-summaries'] }] }),
    );
    await waitFor(
      async () =>
        (await fetch(server.url, { method: 'POST', headers: { authorization: `Bearer ${LATER}` }, body: '{}' }))
          .status === 401,
    );
    const moved = await clientFor(server, BILLING, era);
    try {
      expect((await moved.skills.list()).skills.map((skill) => skill.uri)).toEqual(['skill://pdf-summaries/SKILL.md']);
    } finally {
      await moved.client.close();
    }
    // Restore for the other era's run.
    await fsp.writeFile(file, INITIAL_TOKENS);
    await waitFor(
      async () =>
        (await fetch(server.url, { method: 'POST', headers: { authorization: `Bearer ${LATER}` }, body: '{}' }))
          .status === 401,
    );
  });
});

describe('--http-tokens reload and open listen streams', () => {
  it('ends the listen streams of a removed token and keeps those of a token that did not change', async () => {
    const dir = await makeTempDir();
    const file = path.join(dir, 'tokens.json');
    await fsp.writeFile(file, INITIAL_TOKENS);
    const server = await startHttpServer(['--http-tokens', file, SAMPLE_SKILLS]);
    const listen = (token: string) => openListenStream(server.url, token, `listen-${token}`);
    try {
      const billing = await listen(BILLING);
      const everyone = await listen(EVERYONE);
      // The billing token is revoked; everyone's entry is written again unchanged.
      await fsp.writeFile(file, JSON.stringify({ tokens: [{ name: 'everyone', token: EVERYONE, prefixes: ['*'] }] }));
      await waitFor(() => billing.stream.ended, { describe: () => `billing stream: ${billing.stream.text}` });
      expect(eventsOf(server.stderr(), 'http-tokens-reloaded')).toMatchObject([{ tokens: 1, closedViews: 1 }]);
      expect(everyone.stream.ended).toBe(false);
      await everyone.cancel();
    } finally {
      await server.stop();
      await removeTree(dir);
    }
  });
});

describe('--http-tokens FILE that cannot be used', () => {
  it.each([
    ['not JSON', '{bad', '--http-tokens FILE: not JSON'],
    [
      'no tokens',
      '{"tokens":[]}',
      '--http-tokens FILE: expected { "tokens": [ { "name", "token", "prefixes" }, … ] } with at least one token',
    ],
    [
      'a short token',
      '{"tokens":[{"name":"a","token":"short","prefixes":["*"]}]}',
      '--http-tokens FILE: a: "token" must be a string of at least 16 characters',
    ],
  ])('%s: exit 2 with one start-failed line naming the problem, no stack trace', async (_label, text, message) => {
    const dir = await makeTempDir();
    try {
      const file = path.join(dir, 'tokens.json');
      await fsp.writeFile(file, text);
      const run = cli(['--http', '127.0.0.1:0', '--http-tokens', file, SAMPLE_SKILLS]);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(eventsOf(run.stderr, 'start-failed')).toMatchObject([
        { level: 60, code: 'CONFIG_INVALID', msg: message.replace('FILE', file) },
      ]);
      expect(run.stderr).not.toContain('"stack"');
    } finally {
      await removeTree(dir);
    }
  });
});
