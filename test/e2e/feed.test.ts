/**
 * The discovery feed over `--http` (docs/feed.md), on real HTTP (127.0.0.1): a view's feed reached without a header at
 * `/feeds/<key>` names only the skills the view sees (and the key of a removed token stops working); `/feeds` tells a
 * token's holder that path; the header-less root feed is refused when tokens are configured; answers carry a strong
 * ETag and Cache-Control from `--ttl`/`--cache-scope`, and `If-None-Match` is answered 304; archives are the same
 * bytes on two replicas (two processes) and in `export --well-known`.
 */
import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/live.js';
import { type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const BILLING = 'billing-token-0123456789';
const EVERYONE = 'everyone-token-0123456789';
const INDEX = '.well-known/agent-skills/index.json';

/** What a feed index lists: name, type and url of each entry. */
async function entries(response: Response): Promise<string[][]> {
  expect(response.status).toBe(200);
  const index = (await response.json()) as { $schema: string; skills: { name: string; type: string; url: string }[] };
  expect(index.$schema).toBe('https://schemas.agentskills.io/discovery/0.2.0/schema.json');
  return index.skills.map((skill) => [skill.name, skill.type, skill.url]);
}

describe('feeds of --http-tokens views', () => {
  let dir: string;
  let file: string;
  let server: HttpServer;
  let base: string;

  beforeAll(async () => {
    dir = await makeTempDir();
    file = path.join(dir, 'tokens.json');
    await fsp.writeFile(
      file,
      JSON.stringify({
        tokens: [
          { name: 'billing', token: BILLING, prefixes: ['acme/billing'] },
          { name: 'everyone', token: EVERYONE, prefixes: ['*'] },
        ],
      }),
    );
    server = await startHttpServer(['--http-tokens', file, '--ttl', '60000', '--cache-scope', 'public', SAMPLE_SKILLS]);
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server.stop();
    await removeTree(dir);
  });

  it('gives each token a feed path that lists only what its view sees', async () => {
    expect((await fetch(`${base}/feeds`)).status).toBe(401);
    const feedOf = async (token: string): Promise<string> => {
      const answer = await fetch(`${base}/feeds`, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(200);
      const { feed } = (await answer.json()) as { feed: string };
      expect(feed).toMatch(/^\/feeds\/[\w-]{43}$/u);
      return feed;
    };
    const billing = await feedOf(BILLING);
    // The refunds of acme/billing is the only "refunds" billing sees: it is published to billing.
    expect(await entries(await fetch(`${base}${billing}/${INDEX}`))).toEqual([['refunds', 'archive', 'refunds.zip']]);
    const everyone = await feedOf(EVERYONE);
    expect(await entries(await fetch(`${base}${everyone}/${INDEX}`))).toEqual([
      ['data-pipeline', 'archive', 'data-pipeline.zip'],
      ['csv-cleaning', 'archive', 'csv-cleaning.zip'],
      ['pdf-summaries', 'skill-md', 'pdf-summaries/SKILL.md'],
      ['report-writer', 'archive', 'report-writer.zip'],
    ]);
    // Billing's key does not reach what billing may not see, and a made-up key reaches nothing.
    expect((await fetch(`${base}${billing}/.well-known/agent-skills/report-writer.zip`)).status).toBe(404);
    expect((await fetch(`${base}/feeds/${'A'.repeat(43)}/${INDEX}`)).status).toBe(404);
    // Without a key, the root feed wants the header, and answers the header's view.
    expect((await fetch(`${base}/${INDEX}`)).status).toBe(401);
    const withHeader = await fetch(`${base}/${INDEX}`, { headers: { authorization: `Bearer ${BILLING}` } });
    expect(withHeader.headers.get('cache-control')).toBe('private, max-age=60');
    expect(await entries(withHeader)).toEqual([['refunds', 'archive', 'refunds.zip']]);
  });

  it('answers with a strong ETag and --ttl/--cache-scope, 304 to If-None-Match, the digest the index names', async () => {
    const everyone = (
      (await (await fetch(`${base}/feeds`, { headers: { authorization: `Bearer ${EVERYONE}` } })).json()) as {
        feed: string;
      }
    ).feed;
    const index = (await (await fetch(`${base}${everyone}/${INDEX}`)).json()) as {
      skills: { url: string; digest: string }[];
    };
    for (const skill of index.skills) {
      const url = `${base}${everyone}/.well-known/agent-skills/${skill.url}`;
      const answer = await fetch(url);
      expect(answer.status).toBe(200);
      const bytes = Buffer.from(await answer.arrayBuffer());
      expect(`sha256:${createHash('sha256').update(bytes).digest('hex')}`).toBe(skill.digest);
      expect(answer.headers.get('etag')).toBe(`"${skill.digest.slice(7)}"`);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=60');
      const again = await fetch(url, { headers: { 'if-none-match': answer.headers.get('etag') as string } });
      expect(again.status).toBe(304);
    }
  });

  it("stops a removed token's feed key", async () => {
    const answer = await fetch(`${base}/feeds`, { headers: { authorization: `Bearer ${BILLING}` } });
    const { feed } = (await answer.json()) as { feed: string };
    await fsp.writeFile(file, JSON.stringify({ tokens: [{ name: 'everyone', token: EVERYONE, prefixes: ['*'] }] }));
    await waitFor(async () => (await fetch(`${base}${feed}/${INDEX}`)).status === 404);
  });
});

describe('archives are deterministic', () => {
  it('two servers and export --well-known give the same bytes', async () => {
    const one = await startHttpServer([SAMPLE_SKILLS]);
    const two = await startHttpServer([SAMPLE_SKILLS]);
    const dir = await makeTempDir();
    try {
      expect(cli(['export', '--well-known', dir, SAMPLE_SKILLS]).status).toBe(0);
      for (const file of ['index.json', 'data-pipeline.zip', 'csv-cleaning.zip', 'report-writer.zip']) {
        const bytes = async (server: HttpServer): Promise<Buffer> =>
          Buffer.from(
            await (await fetch(`http://127.0.0.1:${server.port}/.well-known/agent-skills/${file}`)).arrayBuffer(),
          );
        const exported = readFileSync(path.join(dir, '.well-known', 'agent-skills', file));
        expect(await bytes(one), file).toEqual(exported);
        expect(await bytes(two), file).toEqual(exported);
      }
    } finally {
      await one.stop();
      await two.stop();
      await removeTree(dir);
    }
  });
});
