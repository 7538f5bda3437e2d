/**
 * The invariant the compat surfaces serve, proven with a model of a host with the Skills extension (Claude Code's
 * client: the burst, `resources/list` followed to its last page and `skills/list` to 100 skills, `list_changed`
 * handlers registered only after that whole first fetch, notifications lost before it or while their list is in
 * flight; `test/helpers/extension-host.ts`) on real directories over stdio, and with real clients over HTTP.
 *
 * What such a host shows: its `/skills:` menu holds each served skill exactly once (the skills it lists through the
 * extension, then one prompt for each served skill it does not list: none twice, none missing), its model is shown
 * each skill once (the host's own listing, or the catalog in `read_skill`'s description, which names a prefix of the
 * unlisted skills within `--catalog-max` and says how many more), and every served skill stays reachable (the host's
 * listing, or `read_skill`). It shows this once its first fetch is answered, before it acts on any notification: a
 * host that registers its handlers later still (Claude Code does) would lose a notification the model takes. Cases:
 * 6 skills with `resources/list` in one page and in three (`--page-size 6`); 400 skills (`resources/list` in four
 * pages), and with `--page-size 10` (`skills/list` in ten pages too); a first build still
 * running when the burst arrives; a live edit.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { catalogOf, ExtensionHost, type HostView } from '../helpers/extension-host.js';
import { startGitHttp } from '../helpers/git-http.js';
import { createRemote } from '../helpers/git-repo.js';
import { eraClientOptions, ERAS, type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
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
  const run = cli(['manifest', root]);
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

/** What a host shows of a catalog, counted. */
interface Shown {
  /** Skills the host lists through the extension. */
  readonly listed: number;
  /** Prompts it holds. */
  readonly prompts: number;
  /** Entries of its `/skills:` menu: listed skills and prompts. */
  readonly menu: number;
  /** Served skills the menu holds more than once. */
  readonly twice: number;
  /** Served skills the menu does not hold. */
  readonly missing: number;
  /** Skills `read_skill`'s catalog names. */
  readonly catalog: number;
  /** How many more unlisted skills its description says there are, beyond the catalog ("N more"). */
  readonly more: number;
}

/** The default of `--catalog-max`. */
const CATALOG_MAX = 4096;

/**
 * Counts what `view` shows of the skills served from `root`, and asserts the invariant on it: the menu holds each
 * served skill once (the prompts are exactly the served skills the host does not list), `read_skill`'s catalog names
 * a prefix of those unlisted skills in order within `catalogMax` characters and says how many more, the model is shown
 * no skill twice, and every unlisted skill reads back through `read_skill`. (No tree here has a skill with
 * `user-invocable: false`, which gets no prompt, or `disable-model-invocation: true`, which gets no catalog line.)
 *
 * @returns the counts, for the caller to compare with what it expects (asserted after the counts are compared, so
 *   that a failure shows the counts first).
 */
async function shownBy(
  view: HostView,
  root: string,
  current: ExtensionHost,
  catalogMax = CATALOG_MAX,
): Promise<{ shown: Shown; check: () => Promise<void> }> {
  const served = published(root);
  const byName = new Map<string, string[]>();
  for (const skill of served) byName.set(skill.name, [...(byName.get(skill.name) ?? []), skill.uri]);
  const listed = new Set(view.skills);
  const unlisted = served.map((skill) => skill.uri).filter((uri) => !listed.has(uri));
  const prompted = await Promise.all(view.prompts.map(hostPromptSkill(current)));
  const menu = [...view.skills, ...prompted];
  const times = new Map<string, number>();
  for (const uri of menu) times.set(uri, (times.get(uri) ?? 0) + 1);
  const catalog = catalogOf(view.readSkill).map((item) =>
    item.startsWith('skill://') ? item : (byName.get(item) ?? [item])[0],
  );
  const more = Number(/ (\d+) more: find them with search_skills or list_skills\./u.exec(view.readSkill)?.[1] ?? 0);
  const shown: Shown = {
    listed: view.skills.length,
    prompts: view.prompts.length,
    menu: menu.length,
    twice: served.filter((skill) => (times.get(skill.uri) ?? 0) > 1).length,
    missing: served.filter((skill) => !times.has(skill.uri)).length,
    catalog: catalog.length,
    more,
  };
  const check = async (): Promise<void> => {
    expect(new Set(view.skills).size, 'the host lists each skill once').toBe(view.skills.length);
    expect([...prompted].sort(), 'the prompts are exactly the served skills the host does not list').toEqual(
      [...unlisted].sort(),
    );
    expect(new Set(view.prompts).size, 'prompt names are unique').toBe(view.prompts.length);
    expect(catalog, "read_skill's catalog names a prefix of the unlisted skills, in order").toEqual(
      unlisted.slice(0, catalog.length),
    );
    expect(catalog.length + more, "read_skill's description accounts for every unlisted skill").toBe(unlisted.length);
    expect(view.readSkill.length).toBeLessThanOrEqual(catalogMax);
    const model = [...view.skills, ...catalog];
    expect(new Set(model).size, 'the model is shown each skill once').toBe(model.length);
    const call = hostCall(current);
    for (const uri of unlisted) {
      const skill = served.find((entry) => entry.uri === uri);
      const read = await call('read_skill', { uri });
      expect(read.content[1]?.text, `${uri} reachable through read_skill`).toBe(
        readFileSync(skill?.file ?? '', 'utf8'),
      );
    }
  };
  return { shown, check };
}

/**
 * Asserts what `current` shows, settled at `view`: the counts `expected` both once its first fetch was answered (before
 * it acted on any notification: what a host that registers its handlers later still shows) and once settled, with no
 * notification lost; then the invariant, and that the first fetch already held all of `view`.
 */
async function expectShown(
  current: ExtensionHost,
  view: HostView,
  root: string,
  expected: Shown,
  catalogMax = CATALOG_MAX,
): Promise<Shown> {
  const first = current.firstFetch;
  expect(first, 'the first fetch was answered').toBeDefined();
  const settled = await shownBy(view, root, current, catalogMax);
  const fetched = await shownBy(first ?? view, root, current, catalogMax);
  expect(
    { firstFetch: fetched.shown, settled: settled.shown, lost: current.lost.map((n) => `${n.during}: ${n.method}`) },
    'what the host shows (menu = listed + prompts)',
  ).toEqual({ firstFetch: expected, settled: expected, lost: [] });
  await settled.check();
  expect(first, 'what the host held once its first fetch was answered').toEqual(view);
  return settled.shown;
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

describe('a host with the Skills extension over stdio (handlers registered after its whole first fetch)', () => {
  it.each([
    { flags: [], resourcesPages: 1 },
    { flags: ['--page-size', '6'], resourcesPages: 3 },
  ])(
    'on sample-skills ($flags): lists all 6 itself; 6 menu entries, no prompt, no catalog',
    async ({ flags, resourcesPages }) => {
      host = new ExtensionHost([SAMPLE_SKILLS, ...flags]);
      const view = await host.connect();
      expect(view.tools).toEqual(['list_skills', 'search_skills', 'read_skill', 'read_skill_file']);
      expect(host.requests.resources, 'resources/list pages of the first fetch').toBe(resourcesPages);
      await expectShown(host, view, SAMPLE_SKILLS, {
        listed: 6,
        prompts: 0,
        menu: 6,
        twice: 0,
        missing: 0,
        catalog: 0,
        more: 0,
      });
      expect(view.readSkill).toContain("Every skill of this server is in your host's own skill list");
    },
  );

  /** The host on 400 skills served with `flags`, its first fetch reading that many pages of each list. */
  async function on400(flags: readonly string[], skillsPages: number, resourcesPages: number): Promise<void> {
    const root = await generated(400);
    host = new ExtensionHost([root, ...flags]);
    const view = await host.connect();
    expect(host.requests.skills, 'skills/list pages of the first fetch').toBe(skillsPages);
    expect(host.requests.resources, 'resources/list pages of the first fetch').toBe(resourcesPages);
    const shown = await expectShown(host, view, root, {
      listed: 100,
      prompts: 300,
      menu: 400,
      twice: 0,
      missing: 0,
      catalog: expect.any(Number) as number,
      more: expect.any(Number) as number,
    });
    expect(shown.catalog).toBeGreaterThan(0);
    expect(shown.more).toBeGreaterThan(0);
    expect(view.skills[0]).toBe('skill://helper-000/SKILL.md');
    expect(catalogOf(view.readSkill)[0]).toBe('helper-100');
    expect(view.readSkill).toContain("The other 100 skills are in your host's own skill list");
    // Every skill beyond the listing is found by a search too.
    const found = await hostCall(host)('search_skills', { query: 'task 342' });
    expect((JSON.parse(found.content[0]?.text ?? '{}') as { skills: { name: string }[] }).skills[0]?.name).toBe(
      'helper-342',
    );
  }

  it('on 400 skills: keeps the first 100; the other 300 are its prompts, a prefix of them in the catalog', () =>
    on400([], 1, 4));

  // skills/list pages hold fewer than the 100 skills the host keeps: the burst's tools/list and prompts/list wait
  // until the host has paged to them (else 390 prompts, 490 menu entries, every correction lost in the first fetch).
  it('on 400 skills with --page-size 10 (10 skills/list pages, 40 resources/list pages): the same', () =>
    on400(['--page-size', '10'], 10, 40));

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
    expect(host.requests.resources, 'resources/list pages of the first fetch').toBe(2);
    // The work repository holds the committed tree (its .git is not served: names starting with "." are ignored).
    await expectShown(host, view, remote.work, {
      listed: 100,
      prompts: 50,
      menu: 150,
      twice: 0,
      missing: 0,
      catalog: expect.any(Number) as number,
      more: expect.any(Number) as number,
    });
  });

  it('after a live edit (a skill added): the host re-lists, and the invariant holds again', async () => {
    const root = await temps.tree({
      'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
      'beta/SKILL.md': skillMd('beta', 'Second skill.'),
    });
    host = new ExtensionHost([root]);
    await host.connect();
    expect(host.listening).toBe(true);
    await addToTree(root, { 'gamma/SKILL.md': skillMd('gamma', 'Third skill.') });
    await host.wire.waitFor((message) => message['method'] === 'notifications/resources/list_changed');
    const view = await host.settle();
    expect(view.skills).toEqual(['skill://alpha/SKILL.md', 'skill://beta/SKILL.md', 'skill://gamma/SKILL.md']);
    const { shown, check } = await shownBy(view, root, host);
    expect({ ...shown, lost: host.lost.map((n) => `${n.during}: ${n.method}`) }).toEqual({
      listed: 3,
      prompts: 0,
      menu: 3,
      twice: 0,
      missing: 0,
      catalog: 0,
      more: 0,
      lost: [],
    });
    await check();
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
