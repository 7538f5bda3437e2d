/**
 * The invariant the compat surfaces serve, proven with a faithful model of a host with the Skills extension (Claude
 * Code's client: the burst, one page of at most 100 skills, notifications lost while their list is in flight;
 * `test/helpers/extension-host.ts`) on real directories over stdio, and with real clients over HTTP: the model is
 * shown each skill once (the host's own listing, or the catalog in `read_skill`'s description), the user sees each
 * skill once (the host's listing, or a prompt), and every served skill stays reachable (the host's listing, or
 * `read_skill`). Cases: a small catalog, 400 skills, a first build still running when the burst arrives, a live edit.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';

import { catalogOf, ExtensionHost, type HostView } from '../helpers/extension-host.js';
import { startGitHttp } from '../helpers/git-http.js';
import { createRemote } from '../helpers/git-repo.js';
import { BIN, eraClientOptions, ERAS, type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
import { addToTree, removeTree, skillMd, tempTrees } from '../helpers/tree.js';

const temps = tempTrees();
let host: ExtensionHost | undefined;
let http: HttpServer | undefined;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await host?.stop();
  host = undefined;
  await http?.stop();
  http = undefined;
  for (const step of cleanup.splice(0)) await step();
  await temps.removeAll();
});

/** What the server publishes for a tree: each skill's URI, name and SKILL.md path on disk. */
function published(root: string): { uri: string; name: string; file: string }[] {
  const run = spawnSync(process.execPath, [BIN, 'manifest', root], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const manifest = JSON.parse(run.stdout) as {
    skills: { uri: string; frontmatter: { name: string } }[];
  };
  return manifest.skills.map((entry) => ({
    uri: entry.uri,
    name: entry.frontmatter.name,
    file: path.join(root, ...decodeURI(entry.uri.slice('skill://'.length)).split('/')),
  }));
}

/** A tree of `count` generated skills. */
async function generated(count: number): Promise<string> {
  return temps.tree(
    Object.fromEntries(
      Array.from({ length: count }, (_, index) => {
        const name = `helper-${String(index).padStart(3, '0')}`;
        return [`${name}/SKILL.md`, skillMd(name, `Reviews and fixes code for task ${index}.`)];
      }),
    ),
  );
}

/**
 * Asserts the invariant on what `host` holds: model and user are shown each served skill once, and every served skill
 * the host does not list reads back through `read_skill`.
 *
 * @returns how many skills the host lists itself, how many the catalog names, and how many prompts it holds.
 */
async function expectInvariant(
  view: HostView,
  root: string,
  call: (name: string, args: Record<string, unknown>) => Promise<{ content: { text?: string }[] }>,
  promptSkill: (name: string) => Promise<string>,
): Promise<{ listed: number; catalog: number; prompts: number }> {
  const served = published(root);
  const byName = new Map<string, string[]>();
  for (const skill of served) byName.set(skill.name, [...(byName.get(skill.name) ?? []), skill.uri]);
  const catalog = catalogOf(view.readSkill).map((item) =>
    item.startsWith('skill://') ? item : (byName.get(item) ?? [item])[0],
  );
  const model = [...view.skills, ...catalog];
  expect(new Set(model).size, 'the model is shown each skill once').toBe(model.length);
  const prompted = await Promise.all(view.prompts.map(promptSkill));
  const user = [...view.skills, ...prompted];
  expect(new Set(user).size, 'the user is shown each skill once').toBe(user.length);
  const listed = new Set(view.skills);
  for (const skill of served) {
    if (listed.has(skill.uri)) continue;
    const read = await call('read_skill', { uri: skill.uri });
    expect(read.content[1]?.text, `${skill.uri} reachable through read_skill`).toBe(readFileSync(skill.file, 'utf8'));
  }
  expect(prompted.sort()).toEqual(
    served
      .map((skill) => skill.uri)
      .filter((uri) => !listed.has(uri))
      .sort(),
  );
  return { listed: view.skills.length, catalog: catalog.length, prompts: view.prompts.length };
}

/** Calls a tool through the model host's wire. */
function hostCall(current: ExtensionHost) {
  return async (name: string, args: Record<string, unknown>) =>
    ((await current.request('tools/call', { name, arguments: args }))['result'] ?? { content: [] }) as {
      content: { text?: string }[];
    };
}

/** The skill a prompt brings, from its text (`follow its SKILL.md (skill://…/SKILL.md)`). */
function hostPromptSkill(current: ExtensionHost) {
  return async (name: string): Promise<string> => {
    const answer = await current.request('prompts/get', { name });
    const text = (answer['result'] as { messages: { content: { text: string } }[] }).messages[0]?.content.text ?? '';
    return /SKILL\.md \((skill:\/\/[^)]+)\)/u.exec(text)?.[1] ?? `no skill in prompt ${name}`;
  };
}

describe('a host with the Skills extension over stdio (the burst, one page, notifications after answers)', () => {
  it('on sample-skills: lists all 6 itself, and is offered no prompt and no catalog', async () => {
    host = new ExtensionHost([SAMPLE_SKILLS]);
    const view = await host.connect();
    expect(view.tools).toEqual(['list_skills', 'search_skills', 'read_skill', 'read_skill_file']);
    expect(await expectInvariant(view, SAMPLE_SKILLS, hostCall(host), hostPromptSkill(host))).toEqual({
      listed: 6,
      catalog: 0,
      prompts: 0,
    });
  });

  it('on 400 skills: keeps the first 100; the other 300 are its prompts, named in the catalog as far as it fits', async () => {
    const root = await generated(400);
    host = new ExtensionHost([root]);
    const view = await host.connect();
    const counts = await expectInvariant(view, root, hostCall(host), hostPromptSkill(host));
    expect(counts.listed).toBe(100);
    expect(counts.prompts).toBe(300);
    expect(view.skills[0]).toBe('skill://helper-000/SKILL.md');
    expect(catalogOf(view.readSkill)[0]).toBe('helper-100');
    // Every skill beyond the listing is found by a search too.
    const found = await hostCall(host)('search_skills', { query: 'task 342' });
    expect((JSON.parse(found.content[0]?.text ?? '{}') as { skills: { name: string }[] }).skills[0]?.name).toBe(
      'helper-342',
    );
  });

  it('with the burst arriving while the first build runs: the invariant holds once the build is served', async () => {
    // A git root whose remote has not answered yet: the first build waits for it, and the burst meanwhile.
    const remote = await createRemote();
    cleanup.push(
      () => removeTree(remote.projectRoot),
      () => removeTree(path.dirname(remote.work)),
    );
    await remote.commit(
      Object.fromEntries(
        Array.from({ length: 150 }, (_, index) => {
          const name = `helper-${String(index).padStart(3, '0')}`;
          return [`${name}/SKILL.md`, skillMd(name, `Reviews and fixes code for task ${index}.`)];
        }),
      ),
    );
    let release!: () => void;
    const git = await startGitHttp(remote.projectRoot, { hold: new Promise((resolve) => (release = resolve)) });
    cleanup.push(() => git.close());
    const cache = await temps.tempDir();
    host = new ExtensionHost([`git+${git.base}/${remote.name}#main`, '--cache-dir', cache]);
    await git.firstRequest;
    await host.open();
    expect(host.wire.stderr()).not.toContain('"event":"index-built"');
    release();
    const view = await host.settle();
    // The work repository holds the committed tree (its .git is not served: names starting with "." are ignored).
    expect(await expectInvariant(view, remote.work, hostCall(host), hostPromptSkill(host))).toEqual({
      listed: 100,
      catalog: expect.any(Number),
      prompts: 50,
    });
  });

  it('after a live edit (a skill added): the host re-lists, and the invariant holds again', async () => {
    const root = await temps.tree({
      'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
      'beta/SKILL.md': skillMd('beta', 'Second skill.'),
    });
    host = new ExtensionHost([root]);
    await host.connect();
    await addToTree(root, { 'gamma/SKILL.md': skillMd('gamma', 'Third skill.') });
    await host.wire.waitFor((message) => message['method'] === 'notifications/resources/list_changed');
    const view = await host.settle();
    expect(view.skills).toEqual(['skill://alpha/SKILL.md', 'skill://beta/SKILL.md', 'skill://gamma/SKILL.md']);
    expect(await expectInvariant(view, root, hostCall(host), hostPromptSkill(host))).toEqual({
      listed: 3,
      catalog: 0,
      prompts: 0,
    });
  });
});

describe('hosts over stateless HTTP (each request judged alone)', () => {
  const clientOf = async (era: (typeof ERAS)[number]): Promise<Client> => {
    const client = new Client({ name: 'http-host', version: '1.0.0' }, eraClientOptions(era));
    await client.connect(new StreamableHTTPClientTransport(new URL((http as HttpServer).url)));
    return client;
  };

  it('2026-07-28 (a host that may list skills itself): tools without a catalog, no prompts; every skill reachable', async () => {
    const root = await generated(400);
    http = await startHttpServer([root]);
    const client = await clientOf(ERAS[2]);
    try {
      expect((await client.listPrompts()).prompts).toEqual([]);
      const readSkill = (await client.listTools()).tools.find((tool) => tool.name === 'read_skill');
      expect(readSkill?.description).toBe(
        "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri when several skills share a name. Find a skill with search_skills or list_skills.",
      );
      const read = await client.callTool({ name: 'read_skill', arguments: { uri: 'skill://helper-342/SKILL.md' } });
      expect((read.content as { text: string }[])[1]?.text).toBe(
        readFileSync(path.join(root, 'helper-342', 'SKILL.md'), 'utf8'),
      );
    } finally {
      await client.close();
    }
  });

  it('2025-11-25 (no extension host speaks it but the draft prototypes): every prompt and the catalog', async () => {
    http = await startHttpServer([SAMPLE_SKILLS]);
    const client = await clientOf(ERAS[1]);
    try {
      expect((await client.listPrompts()).prompts).toHaveLength(6);
      const readSkill = (await client.listTools()).tools.find((tool) => tool.name === 'read_skill');
      expect(catalogOf(readSkill?.description ?? '')).toHaveLength(6);
    } finally {
      await client.close();
    }
  });
});
