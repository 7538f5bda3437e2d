/**
 * `--compat auto|on|off` over real stdio (docs/ARCHITECTURE.md, "Connections"): the instructions (the same for every
 * host, naming no skill), the read-only tools (the catalog in `read_skill`'s description, search, files in parts),
 * one prompt per skill, and what a connection is offered as its host lists skills through the extension (all of them,
 * part of them, or through the draft discovery index), with list_changed after the answers it changes;
 * `--resources`, `--catalog-max`, and live changes.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/live.js';
import { waitForEvent } from '../helpers/logs.js';
import { SAMPLE_CATALOG_LINES, SAMPLE_PROMPT_NAMES, SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, type Era, ERAS, errorCodeOf, rawRequest, SAMPLE_SKILLS } from '../helpers/server.js';
import { addToTree, skillMd, tempTrees } from '../helpers/tree.js';

const BOTH_ERAS = [ERAS[1], ERAS[2]] as const;
const BILLING = 'skill://acme/billing/refunds/SKILL.md';
const SUPPORT = 'skill://acme/support/refunds/SKILL.md';

let connection: Connection | undefined;
const temps = tempTrees();
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await temps.removeAll();
});

/** The server instructions, exactly: the same for every host, and naming no skill. */
const INSTRUCTIONS_TEXT =
  'Agent Skills for specialised tasks. Before such a task, find a skill with the search_skills tool (a few words from the task) or list_skills, read it with read_skill, and follow its SKILL.md; read the files it names with read_skill_file. Skills your host lists in its own skill list can be loaded from there instead. Your host may show these tools with a prefix (such as mcp__skills__read_skill or skills_read_skill).';

/** What `read_skill`'s description says before its catalog. */
const SUMMARY =
  "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri when several skills share a name.";

/** `read_skill`'s description for a host that lists none of the sample skills itself. */
const SAMPLE_CATALOG = [SUMMARY, '', 'Skills (name: description):', ...SAMPLE_CATALOG_LINES].join('\n');

const disk = (rel: string): string => readFileSync(path.join(SAMPLE_SKILLS, rel), 'utf8');
/** The frontmatter names of the sample skills, in URI order. */
const SAMPLE_NAMES = ['refunds', 'refunds', 'data-pipeline', 'csv-cleaning', 'pdf-summaries', 'report-writer'];
/** The description part of a catalog line (`- name: description`, `- name (uri): description`), on one line. */
const oneLine = (catalogLine: string): string => catalogLine.replace(/^- [^ :]+(?: \([^)]*\))?: /u, '');

type Content = Record<string, unknown>[];
/** Calls a tool; the result without `_meta` (2026-07-28 results carry the server's identity there). */
async function call(
  name: string,
  args: Record<string, unknown>,
): Promise<{ content: Content; isError?: boolean; structuredContent?: unknown }> {
  const { _meta: _ignored, ...result } = await connection!.client.callTool({ name, arguments: args });
  return result;
}
const errorText = (text: string) => ({ content: [{ type: 'text', text }], isError: true });
/** `read_skill`'s description as the connection's host is offered it now. */
async function readSkillDescription(): Promise<string | undefined> {
  return (await connection!.client.listTools()).tools.find((tool) => tool.name === 'read_skill')?.description;
}
/** Counts the `list_changed` notifications of tools and prompts the connection hears (2026-07-28: a listen stream). */
async function hearListChanges(era: Era): Promise<{ tools: number; prompts: number }> {
  const heard = { tools: 0, prompts: 0 };
  connection!.client.setNotificationHandler('notifications/tools/list_changed', () => {
    heard.tools++;
  });
  connection!.client.setNotificationHandler('notifications/prompts/list_changed', () => {
    heard.prompts++;
  });
  if (era.label === '2026-07-28') await connection!.client.listen({ toolsListChanged: true, promptsListChanged: true });
  return heard;
}

describe.each(BOTH_ERAS)('era $label, host without the extension (default --compat auto)', (era) => {
  it('sends instructions naming the tools and no skill, and declares tools and prompts next to the extension', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    expect(connection.client.getInstructions()).toBe(INSTRUCTIONS_TEXT);
    expect(connection.client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true } },
    });
  });

  it('lists four read-only tools, the catalog in read_skill, and list_skills returns every skill as compact JSON', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const { tools } = await connection.client.listTools();
    expect(tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties ?? {})])).toEqual([
      ['list_skills', ['cursor']],
      ['search_skills', ['query', 'limit', 'cursor']],
      ['read_skill', ['name', 'uri']],
      ['read_skill_file', ['uri', 'skill', 'path', 'offset', 'length']],
    ]);
    expect(tools.find((tool) => tool.name === 'read_skill')?.description).toBe(SAMPLE_CATALOG);
    // Claude Code shows each in full from the first request, never as a bare name behind its tool search.
    expect(tools.map((tool) => tool._meta)).toEqual(tools.map(() => ({ 'anthropic/alwaysLoad': true })));
    for (const tool of tools)
      expect(tool.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    const expected = {
      skills: SAMPLE_SKILL_URIS.map((uri, index) => ({
        name: SAMPLE_NAMES[index],
        description: oneLine(SAMPLE_CATALOG_LINES[index]!),
        uri,
      })),
    };
    const result = await call('list_skills', {});
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(expected);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(expected) }]);
    expect(await call('list_skills', { cursor: 'bogus' })).toEqual(
      errorText('Invalid cursor: it was not issued by this server; call list_skills without a cursor to start over.'),
    );
  });

  it("read_skill returns the skill's other files, then SKILL.md verbatim; a shared name lists the URIs to choose from", async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    expect((await call('read_skill', { name: 'report-writer' })).content).toEqual([
      {
        type: 'text',
        text:
          'Skill "report-writer" at skill://report-writer/SKILL.md. Its other files, relative to skill://report-writer/ (read one with read_skill_file: uri, or skill and path):\n' +
          '- assets/logo.png\n- references/citation-formats.md\n- references/style-guide.md\n- templates/report.md\n- templates/sections/executive-summary.md',
      },
      { type: 'text', text: disk('report-writer/SKILL.md') },
    ]);
    expect(await call('read_skill', { name: 'refunds' })).toEqual(
      errorText(
        `2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`,
      ),
    );
    const support = await call('read_skill', { uri: SUPPORT });
    expect(support.content[0]).toEqual({ type: 'text', text: `Skill "refunds" at ${SUPPORT}. It has no other files.` });
    expect(support.content[1]).toEqual({ type: 'text', text: disk('acme/support/refunds/SKILL.md') });
    expect(await call('read_skill', { name: 'nope' })).toEqual(
      errorText('No served skill is named "nope". Call the list_skills tool to see the available skills.'),
    );
    expect(await call('read_skill', {})).toEqual(
      errorText("Give the skill's name, or its uri when several skills share a name."),
    );
  });

  it('read_skill_file reads text verbatim, images as image blocks, directories as listings, and refuses escapes', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const policy = { content: [{ type: 'text', text: disk('acme/billing/refunds/references/policy.md') }] };
    expect(await call('read_skill_file', { uri: 'skill://acme/billing/refunds/references/policy.md' })).toMatchObject(
      policy,
    );
    expect(await call('read_skill_file', { skill: BILLING, path: 'references/policy.md' })).toMatchObject(policy);
    expect((await call('read_skill_file', { skill: 'data-pipeline', path: 'scripts/validate.py' })).content).toEqual([
      { type: 'text', text: disk('data-pipeline/scripts/validate.py') },
    ]);
    expect((await call('read_skill_file', { skill: 'report-writer', path: 'assets/logo.png' })).content).toEqual([
      {
        type: 'text',
        text: `skill://report-writer/assets/logo.png is an image (image/png, ${readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')).length} bytes).`,
      },
      {
        type: 'image',
        mimeType: 'image/png',
        data: readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')).toString('base64'),
      },
    ]);
    expect((await call('read_skill_file', { uri: 'skill://report-writer/templates' })).content).toEqual([
      {
        type: 'text',
        text: 'skill://report-writer/templates is a directory. Its entries (read one with read_skill_file):\n- report.md\n- sections/',
      },
    ]);
    expect(await call('read_skill_file', { skill: 'report-writer', path: '../pdf-summaries/SKILL.md' })).toEqual(
      errorText('path "../pdf-summaries/SKILL.md" must stay inside the skill: ".." is not allowed.'),
    );
    expect(await call('read_skill_file', { skill: 'refunds', path: 'references/policy.md' })).toEqual(
      errorText(
        `2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`,
      ),
    );
    expect(await call('read_skill_file', { uri: 'file:///etc/passwd' })).toEqual(
      errorText("No served file has the URI file:///etc/passwd. Call read_skill to see a skill's files."),
    );
    expect(await call('read_skill_file', { uri: 42 })).toEqual(errorText('argument "uri" must be a string'));
    // A text file in parts, for hosts that cut long results.
    const guide = disk('report-writer/references/style-guide.md');
    expect(
      await call('read_skill_file', { uri: 'skill://report-writer/references/style-guide.md', offset: 10, length: 25 }),
    ).toEqual({
      content: [
        {
          type: 'text',
          text: `skill://report-writer/references/style-guide.md, characters 10 to 35 of ${guide.length}:\n${guide.slice(10, 35)}`,
        },
      ],
    });
    expect(
      (
        await call('read_skill_file', {
          uri: 'skill://report-writer/references/style-guide.md',
          offset: guide.length - 3,
        })
      ).content,
    ).toEqual([
      {
        type: 'text',
        text: `skill://report-writer/references/style-guide.md, characters ${guide.length - 3} to ${guide.length} of ${guide.length}:\n${guide.slice(-3)}`,
      },
    ]);
    expect(
      await call('read_skill_file', { uri: 'skill://report-writer/references/style-guide.md', offset: 999_999 }),
    ).toEqual(
      errorText(
        `offset 999999 is past the end of skill://report-writer/references/style-guide.md, which has ${guide.length} characters`,
      ),
    );
    expect(await call('read_skill_file', { uri: 'skill://report-writer/SKILL.md', offset: -1 })).toEqual(
      errorText('argument "offset" must be an integer of 0 or more (characters)'),
    );
    expect(await call('read_skill_file', { uri: 'skill://report-writer/SKILL.md', length: 0 })).toEqual(
      errorText('argument "length" must be an integer of 1 or more (characters)'),
    );
    expect(await errorCodeOf(call('write_skill', {}))).toBe(-32602);
  });

  it('search_skills ranks skills by name, description and headings', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const names = async (args: Record<string, unknown>) =>
      ((await call('search_skills', args)).structuredContent as { skills: { uri: string }[] }).skills.map(
        (skill) => skill.uri,
      );
    expect(await names({ query: 'csv' })).toEqual([
      'skill://data-pipeline/csv-cleaning/SKILL.md',
      'skill://data-pipeline/SKILL.md',
    ]);
    expect(await names({ query: 'tone' })).toEqual([SUPPORT]);
    expect(await names({ query: 'refund', limit: 1 })).toEqual([BILLING]);
    const report = await call('search_skills', { query: 'incident report' });
    const expected = {
      skills: [
        {
          name: 'report-writer',
          description: oneLine(SAMPLE_CATALOG_LINES[5]!),
          uri: 'skill://report-writer/SKILL.md',
        },
      ],
    };
    expect(report).toEqual({
      content: [{ type: 'text', text: JSON.stringify(expected) }],
      structuredContent: expected,
    });
    expect(await call('search_skills', { query: '' })).toEqual(
      errorText('query "" has no word to search for; give a few words describing the task'),
    );
  });

  it('offers one prompt per skill in one page, shared names disambiguated, each one text message holding SKILL.md', async () => {
    connection = await connect([SAMPLE_SKILLS, '--page-size', '2'], era);
    const listed = await rawRequest(connection, 'prompts/list', {});
    expect(listed['nextCursor']).toBeUndefined();
    const prompts = listed['prompts'] as { name: string; description: string }[];
    expect(prompts.map((prompt) => prompt.name)).toEqual(SAMPLE_PROMPT_NAMES);
    // Descriptions on one line: report-writer's frontmatter description spans four lines.
    expect(prompts.map((prompt) => prompt.description)).toEqual(SAMPLE_CATALOG_LINES.map((line) => oneLine(line)));
    expect(disk('report-writer/SKILL.md')).toContain(
      'description: |\n  Write structured business and technical reports (status reports, post-incident\n  reviews,',
    );
    const prompt = await connection.client.getPrompt({ name: 'acme-support-refunds' });
    expect(prompt.description).toBe(oneLine(SAMPLE_CATALOG_LINES[1]!));
    expect(prompt.messages).toEqual([
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Use the "refunds" skill for this task: follow its SKILL.md (${SUPPORT}), quoted below. Read the other files it mentions with the read_skill_file tool.\n\n${disk('acme/support/refunds/SKILL.md')}`,
        },
      },
    ]);
    expect(await errorCodeOf(connection.client.getPrompt({ name: 'refunds' }))).toBe(-32602);
  });
});

describe.each(BOTH_ERAS)('era $label, a host that lists every skill through the extension', (era) => {
  it.each([
    ['declares the extension', true],
    ['does not declare it', false],
  ])(
    'auto (it %s): after skills/list it is told prompts and tools changed; it keeps the tools, with no catalog, and no prompts',
    async (_label, declares) => {
      connection = await connect([SAMPLE_SKILLS], era, { skillsExtension: declares });
      const heard = await hearListChanges(era);
      expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
      expect(await readSkillDescription()).toBe(SAMPLE_CATALOG);
      // Declaring the extension changes nothing: what a host lists does.
      expect(heard).toEqual({ tools: 0, prompts: 0 });
      expect((await connection.skills.list()).skills).toHaveLength(6);
      await waitFor(() => heard.tools === 1 && heard.prompts === 1);
      expect((await connection.client.listPrompts()).prompts).toEqual([]);
      expect(await readSkillDescription()).toBe(
        `${SUMMARY} Every skill of this server is in your host's own skill list; this tool reads them too.`,
      );
      // Every skill stays reachable through the tools.
      expect((await call('read_skill', { name: 'pdf-summaries' })).content[1]).toEqual({
        type: 'text',
        text: disk('pdf-summaries/SKILL.md'),
      });
      // A prompt listed before is still answered.
      expect((await connection.client.getPrompt({ name: 'pdf-summaries' })).messages).toHaveLength(1);
      // Once per change: listing again sends nothing more (a notification would have come before this answer).
      await connection.skills.list();
      expect(await rawRequest(connection, 'prompts/list', {})).toMatchObject({ prompts: [] });
      expect(heard).toEqual({ tools: 1, prompts: 1 });
    },
  );

  it('skills/get alone changes nothing: the host lists no skill by it', async () => {
    connection = await connect([SAMPLE_SKILLS], era, { skillsExtension: true });
    await connection.skills.get('skill://pdf-summaries/SKILL.md');
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    expect(await readSkillDescription()).toBe(SAMPLE_CATALOG);
  });

  it('on: offers every prompt and the whole catalog anyway', async () => {
    connection = await connect([SAMPLE_SKILLS, '--compat', 'on'], era, { skillsExtension: true });
    await connection.skills.list();
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    expect(await readSkillDescription()).toBe(SAMPLE_CATALOG);
  });
});

describe.each(BOTH_ERAS)('era $label, the frontmatter says who invokes a skill', (era) => {
  it('disable-model-invocation: a prompt, no catalog line; user-invocable: false: a catalog line, no prompt', async () => {
    const root = await temps.tree({
      'deploy/SKILL.md': skillMd('deploy', 'Deploys to production.', 'disable-model-invocation: true'),
      'style/SKILL.md': skillMd('style', 'House style for prose.', 'user-invocable: false'),
      'quoted/SKILL.md': skillMd('quoted', 'Written with strings.', 'disable-model-invocation: "true"'),
      'plain/SKILL.md': skillMd('plain', 'An ordinary skill.'),
    });
    connection = await connect([root], era);
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'deploy',
      'plain',
      'quoted',
    ]);
    expect(await readSkillDescription()).toBe(
      [
        SUMMARY,
        '',
        'Skills (name: description):',
        '- plain: An ordinary skill.',
        '- style: House style for prose.',
      ].join('\n'),
    );
    // Nor does a model find it by listing or searching; read_skill still reads it (the user may ask for it).
    const listedByTool = (await call('list_skills', {})).structuredContent as { skills: { name: string }[] };
    expect(listedByTool.skills.map((skill) => skill.name)).toEqual(['plain', 'style']);
    const searched = (await call('search_skills', { query: 'deploys production' })).structuredContent as {
      skills: unknown[];
    };
    expect(searched.skills).toEqual([]);
    expect((await call('read_skill', { name: 'deploy' })).isError).toBeUndefined();
    // The entries stay verbatim: a host with the extension reads the fields itself.
    const listed = (await rawRequest(connection, 'skills/list', {})) as { skills: { frontmatter: object }[] };
    expect(listed.skills.map((entry) => entry.frontmatter)).toContainEqual({
      name: 'deploy',
      description: 'Deploys to production.',
      'disable-model-invocation': true,
    });
  });
});

describe.each(BOTH_ERAS)('era $label, a host that lists part of the catalog through the extension', (era) => {
  it('is offered prompts and the catalog of the skills it did not list, and the server says where it stopped', async () => {
    const root = await temps.tree(
      Object.fromEntries(
        Array.from({ length: 150 }, (_, index) => {
          const name = `skill-${String(index).padStart(3, '0')}`;
          return [`${name}/SKILL.md`, skillMd(name, `Handles case ${index}.`)];
        }),
      ),
    );
    connection = await connect([root], era, { skillsExtension: true });
    const heard = await hearListChanges(era);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(150);
    const page = (await rawRequest(connection, 'skills/list', {})) as {
      skills: { uri: string }[];
      nextCursor?: string;
    };
    // A page holds at most 100 entries, whatever --page-size says: what Claude Code keeps of a server.
    expect(page.skills).toHaveLength(100);
    expect(page.nextCursor).toBeDefined();
    await waitFor(() => heard.prompts === 1);
    const prompts = (await connection.client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toEqual(Array.from({ length: 50 }, (_, index) => `skill-${String(index + 100).padStart(3, '0')}`));
    const description = await readSkillDescription();
    expect(description?.startsWith(`${SUMMARY} The other 100 skills are in your host's own skill list`)).toBe(true);
    expect(description).toContain('\n- skill-100: Handles case 100.\n');
    expect(description).not.toContain('skill-099');
    const stopped = await waitForEvent(() => connection!.stderr(), 'listing-partial');
    expect(stopped).toMatchObject({ level: 30, listed: 100, total: 150 });
    // A search still finds what the host did not list.
    const found = (await call('search_skills', { query: 'case 142' })).structuredContent as {
      skills: { name: string }[];
    };
    expect(found.skills[0]?.name).toBe('skill-142');
    // The next page: the host holds everything, and is told so.
    await rawRequest(connection, 'skills/list', { cursor: page.nextCursor });
    await waitFor(() => heard.prompts === 2);
    expect((await connection.client.listPrompts()).prompts).toEqual([]);
  });
});

describe.each(BOTH_ERAS)('era $label, a host that reads the draft discovery index', (era) => {
  it('gets every skill as a skill-md entry; compat then keeps only the second of two same-named skills', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const heard = await hearListChanges(era);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    expect(await readSkillDescription()).toBe(SAMPLE_CATALOG);
    const read = await connection.client.readResource({ uri: 'skill://index.json' });
    expect(read.contents).toHaveLength(1);
    const [content] = read.contents as [{ uri: string; mimeType: string; text: string }];
    expect(content).toMatchObject({ uri: 'skill://index.json', mimeType: 'application/json' });
    const manifest = JSON.parse(cli(['manifest', SAMPLE_SKILLS]).stdout) as {
      skills: {
        uri: string;
        frontmatter: { name: string; description: string };
        resources: { uri: string; digest: string }[];
      }[];
    };
    expect(JSON.parse(content.text)).toEqual({
      $schema: 'https://schemas.agentskills.io/discovery/0.2.0/schema.json',
      skills: manifest.skills.map((entry) => ({
        name: entry.frontmatter.name,
        type: 'skill-md',
        description: entry.frontmatter.description,
        url: entry.uri,
        digest: entry.resources.find((file) => file.uri === entry.uri)?.digest,
      })),
    });
    await waitFor(() => heard.prompts === 1 && heard.tools === 1);
    // The prototypes keep the first of two skills with one name: the second stays a prompt and in the catalog.
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'acme-support-refunds',
    ]);
    expect(await readSkillDescription()).toBe(
      [
        `${SUMMARY} The other 5 skills are in your host's own skill list (this tool reads them too).`,
        '',
        'Skills (name: description):',
        SAMPLE_CATALOG_LINES[1],
      ].join('\n'),
    );
    // Not a skill, nor a file of one: no listing names it.
    expect((await connection.skills.list()).skills.map((entry) => entry.uri)).toEqual([...SAMPLE_SKILL_URIS]);
    expect((await connection.client.listResources()).resources.map((resource) => resource.uri)).not.toContain(
      'skill://index.json',
    );
  });
});

describe.each(BOTH_ERAS)('era $label, --resources', (era) => {
  it('files (default) lists every served file; skills lists each SKILL.md with its description on one line', async () => {
    connection = await connect([SAMPLE_SKILLS, '--resources', 'skills'], era);
    const manifests = (await connection.client.listResources()).resources;
    expect(manifests.map((resource) => [resource.uri, resource.name, resource.description])).toEqual(
      SAMPLE_SKILL_URIS.map((uri, index) => [uri, SAMPLE_NAMES[index], oneLine(SAMPLE_CATALOG_LINES[index]!)]),
    );
    await connection.close();
    connection = await connect([SAMPLE_SKILLS], era);
    const files = (await connection.client.listResources()).resources;
    expect(files.map((resource) => [resource.uri, resource.name])).toEqual([
      [BILLING, 'refunds'],
      ['skill://acme/billing/refunds/references/policy.md', 'refunds/references/policy.md'],
      [SUPPORT, 'refunds'],
      ['skill://data-pipeline/SKILL.md', 'data-pipeline'],
      ['skill://data-pipeline/csv-cleaning/SKILL.md', 'csv-cleaning'],
      ['skill://data-pipeline/csv-cleaning/references/encodings.md', 'csv-cleaning/references/encodings.md'],
      ['skill://data-pipeline/scripts/validate.py', 'data-pipeline/scripts/validate.py'],
      ['skill://pdf-summaries/SKILL.md', 'pdf-summaries'],
      ['skill://report-writer/SKILL.md', 'report-writer'],
      ['skill://report-writer/assets/logo.png', 'report-writer/assets/logo.png'],
      ['skill://report-writer/references/citation-formats.md', 'report-writer/references/citation-formats.md'],
      ['skill://report-writer/references/style-guide.md', 'report-writer/references/style-guide.md'],
      ['skill://report-writer/templates/report.md', 'report-writer/templates/report.md'],
      [
        'skill://report-writer/templates/sections/executive-summary.md',
        'report-writer/templates/sections/executive-summary.md',
      ],
    ]);
    expect(files.find((resource) => resource.uri === 'skill://report-writer/assets/logo.png')).toMatchObject({
      mimeType: 'image/png',
    });
    expect(files.find((resource) => resource.uri === 'skill://report-writer/SKILL.md')?.description).toBe(
      oneLine(SAMPLE_CATALOG_LINES[5]!),
    );
    await connection.close();
    connection = await connect([SAMPLE_SKILLS], era, { env: { SKILLS_SERVE_RESOURCES: 'skills' } });
    expect((await connection.client.listResources()).resources.map((resource) => resource.uri)).toEqual([
      ...SAMPLE_SKILL_URIS,
    ]);
  });
});

it('refuses --resources other than files or skills with exit 2', () => {
  const run = cli(['--resources', 'all', SAMPLE_SKILLS]);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(
    "option '--resources <list>' argument 'all' is invalid. Allowed choices are files, skills.",
  );
});

describe.each(BOTH_ERAS)('era $label, --compat off', (era) => {
  it('sends no instructions and declares neither tools nor prompts', async () => {
    connection = await connect([SAMPLE_SKILLS, '--compat', 'off'], era);
    expect(connection.client.getInstructions()).toBeUndefined();
    const capabilities = connection.client.getServerCapabilities();
    expect(capabilities?.tools).toBeUndefined();
    expect(capabilities?.prompts).toBeUndefined();
    expect(await errorCodeOf(rawRequest(connection, 'tools/list', {}))).toBe(-32601);
    expect(await errorCodeOf(rawRequest(connection, 'prompts/list', {}))).toBe(-32601);
    expect((await connection.skills.list()).skills).toHaveLength(6);
  });
});

describe('--catalog-max and SKILLS_SERVE_CATALOG_MAX', () => {
  /** 40 skills whose catalog lines are 100 characters each: 4,000 characters of catalog. */
  const forty = (): Record<string, string> =>
    Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => {
        const name = `skill-${String(index).padStart(3, '0')}`;
        return [`${name}/SKILL.md`, skillMd(name, `Handles case ${String(index).padStart(3, '0')}.`.padEnd(87, '.'))];
      }),
    );
  const tail = (shown: number) => ` ${40 - shown} more: find them with search_skills or list_skills.`;
  const lines = (count: number) =>
    Array.from(
      { length: count },
      (_, index) =>
        `- skill-${String(index).padStart(3, '0')}: ${`Handles case ${String(index).padStart(3, '0')}.`.padEnd(87, '.')}`,
    );

  it.each([
    // 4,096 - (146 + 54 + 2 + 27) = 3,867: 38 lines of 101.
    ['the default', [], {}, 38],
    ['--catalog-max 1500', ['--catalog-max', '1500'], {}, 12],
    ['the environment twin', [], { SKILLS_SERVE_CATALOG_MAX: '2000' }, 17],
  ])("%s bounds read_skill's description to whole catalog lines", async (_label, flags, env, shown) => {
    const root = await temps.tree(forty());
    connection = await connect([root, ...flags], ERAS[1], { env });
    expect(await readSkillDescription()).toBe(
      [`${SUMMARY}${tail(shown)}`, '', 'Skills (name: description):', ...lines(shown)].join('\n'),
    );
  });

  it.each(['1023', '1000001', 'many'])('refuses --catalog-max %s with exit 2', (value) => {
    const run = cli(['--catalog-max', value, SAMPLE_SKILLS]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--catalog-max must be an integer from 1024 to 1000000 (got "${value}")`);
  });
});

describe('a first build slower than the host', () => {
  it('answers initialize with the same instructions; the tools then serve the whole catalog', async () => {
    const root = await temps.tempDir();
    // 3000 skills × 5 files: indexing 15 000 files takes longer than answering initialize.
    const writeSkill = async (index: number): Promise<void> => {
      const name = `skill-${String(index).padStart(4, '0')}`;
      const dir = path.join(root, name);
      await fsp.mkdir(path.join(dir, 'references'), { recursive: true });
      await Promise.all([
        fsp.writeFile(path.join(dir, 'SKILL.md'), skillMd(name, `Generated skill number ${index}.`)),
        ...[1, 2, 3, 4].map((file) =>
          fsp.writeFile(path.join(dir, 'references', `ref-${file}.md`), `Reference ${file} of ${name}.\n`),
        ),
      ]);
    };
    for (let start = 0; start < 3000; start += 100)
      await Promise.all(Array.from({ length: 100 }, (_, offset) => writeSkill(start + offset)));
    connection = await connect([root, '--no-watch']);
    expect(connection.client.getInstructions()).toBe(INSTRUCTIONS_TEXT);
    const first = (await call('list_skills', {})).structuredContent as {
      skills: { name: string }[];
      nextCursor?: string;
    };
    expect(first.skills[0]?.name).toBe('skill-0000');
    expect(first.nextCursor).toBeDefined();
    const prompts = await rawRequest(connection, 'prompts/list', {});
    expect(prompts['prompts']).toHaveLength(3000);
    expect(prompts['nextCursor']).toBeUndefined();
  });
});

describe.each(BOTH_ERAS)('era $label, live changes', (era) => {
  it('prompts and the catalog follow the current snapshot, and prompts and tools list_changed are sent', async () => {
    const root = await temps.tree({ 'alpha/SKILL.md': skillMd('alpha', 'First skill.') });
    connection = await connect([root], era);
    const heard = await hearListChanges(era);
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha']);
    expect(await readSkillDescription()).toBe(`${SUMMARY}\n\nSkills (name: description):\n- alpha: First skill.`);
    await addToTree(root, { 'beta/SKILL.md': skillMd('beta', 'Second skill.') });
    await waitFor(() => heard.prompts === 1 && heard.tools === 1);
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha', 'beta']);
    expect(await readSkillDescription()).toBe(
      `${SUMMARY}\n\nSkills (name: description):\n- alpha: First skill.\n- beta: Second skill.`,
    );
    expect((await call('read_skill', { name: 'beta' })).content[1]).toEqual({
      type: 'text',
      text: skillMd('beta', 'Second skill.'),
    });
  });
});

describe('2025-11-25 host that listed every skill through the extension, live changes', () => {
  it('hears resources/list_changed but no prompts/list_changed or tools/list_changed', async () => {
    const root = await temps.tree({ 'alpha/SKILL.md': skillMd('alpha', 'First skill.') });
    connection = await connect([root], ERAS[1], { skillsExtension: true });
    const heard = await hearListChanges(ERAS[1]);
    let resourcesChanged = 0;
    connection.client.setNotificationHandler('notifications/resources/list_changed', () => {
      resourcesChanged++;
    });
    await connection.client.listPrompts();
    await connection.client.listTools();
    await connection.skills.list();
    await waitFor(() => heard.prompts === 1 && heard.tools === 1);
    await connection.client.listPrompts();
    await connection.client.listTools();
    await addToTree(root, { 'beta/SKILL.md': skillMd('beta', 'Second skill.') });
    await waitFor(async () => (await connection!.skills.list()).skills.length === 2 && resourcesChanged > 0);
    // A second change as a barrier: a list_changed of the first swap would have been written before this one's
    // resources/list_changed.
    const before = resourcesChanged;
    await addToTree(root, { 'gamma/SKILL.md': skillMd('gamma', 'Third skill.') });
    await waitFor(() => resourcesChanged > before);
    expect(heard).toEqual({ tools: 1, prompts: 1 });
  });
});
