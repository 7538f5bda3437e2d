/**
 * `--compat auto|on|off` over real stdio: the instructions catalog (its bound, and its fallback while a slow first
 * build runs), the read-only tools (search included), one prompt per skill, who is offered them (in `auto`, a host
 * that declares the Skills extension or calls `skills/list` / `skills/get` is not, in both eras, and is told so with
 * list_changed), `--resources files`, and prompts following live changes.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/live.js';
import { SAMPLE_CATALOG_LINES, SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, ERAS, errorCodeOf, rawRequest, SAMPLE_SKILLS, spawnRaw } from '../helpers/server.js';
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

const INTRO =
  "This server provides Agent Skills: folders of instructions, scripts and reference files for specialised tasks. When a task matches a skill's description, read that skill's SKILL.md first (the read_skill tool, or the resource at its skill:// URI) and follow it; read the other files it mentions only when you need them (the read_skill_file tool).";

/** The instructions `skills-serve sample-skills` sends, exactly. */
const SAMPLE_INSTRUCTIONS = [
  INTRO,
  '',
  'All 6 skills are listed below; the list_skills tool returns the same catalog.',
  '',
  'Available skills (name (SKILL.md URI): description):',
  ...SAMPLE_CATALOG_LINES,
].join('\n');

const disk = (rel: string): string => readFileSync(path.join(SAMPLE_SKILLS, rel), 'utf8');
/** The frontmatter names of the sample skills, in URI order. */
const SAMPLE_NAMES = ['refunds', 'refunds', 'data-pipeline', 'csv-cleaning', 'pdf-summaries', 'report-writer'];
/** The description part of a catalog line (`- name (uri): description`), i.e. the description on one line. */
const oneLine = (catalogLine: string): string => catalogLine.slice(catalogLine.indexOf('): ') + 3);

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

describe.each(BOTH_ERAS)('era $label, host without the extension (default --compat auto)', (era) => {
  it('sends the catalog as instructions and declares tools and prompts next to the extension', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    expect(connection.client.getInstructions()).toBe(SAMPLE_INSTRUCTIONS);
    expect(connection.client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true } },
    });
  });

  it('lists four read-only tools, and list_skills returns every skill as JSON text and structured content', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const { tools } = await connection.client.listTools();
    expect(tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties ?? {})])).toEqual([
      ['list_skills', ['cursor']],
      ['search_skills', ['query', 'limit']],
      ['read_skill', ['name', 'uri']],
      ['read_skill_file', ['uri', 'skill', 'path']],
    ]);
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
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(expected, null, 2) }]);
    expect(await call('list_skills', { cursor: 'bogus' })).toEqual(
      errorText('Invalid cursor: it was not issued by this server; call list_skills without a cursor to start over.'),
    );
  });

  it("read_skill returns SKILL.md verbatim and the skill's other files; a shared name lists the URIs to choose from", async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    expect((await call('read_skill', { name: 'report-writer' })).content).toEqual([
      { type: 'text', text: disk('report-writer/SKILL.md') },
      {
        type: 'text',
        text:
          'Skill "report-writer" at skill://report-writer/SKILL.md. Its other files, relative to skill://report-writer/ (read one with read_skill_file: uri, or skill and path):\n' +
          '- assets/logo.png\n- references/citation-formats.md\n- references/style-guide.md\n- templates/report.md\n- templates/sections/executive-summary.md',
      },
    ]);
    expect(await call('read_skill', { name: 'refunds' })).toEqual(
      errorText(
        `2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`,
      ),
    );
    const support = await call('read_skill', { uri: SUPPORT });
    expect(support.content[0]).toEqual({ type: 'text', text: disk('acme/support/refunds/SKILL.md') });
    expect(support.content[1]).toEqual({ type: 'text', text: `Skill "refunds" at ${SUPPORT}. It has no other files.` });
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
      content: [{ type: 'text', text: JSON.stringify(expected, null, 2) }],
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
    expect(prompts.map((prompt) => prompt.name)).toEqual([
      'acme-billing-refunds',
      'acme-support-refunds',
      'data-pipeline',
      'csv-cleaning',
      'pdf-summaries',
      'report-writer',
    ]);
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

describe.each(BOTH_ERAS)('era $label, host that declares the extension', (era) => {
  it('auto: sends the instructions but offers no tools or prompts; the extension serves as before', async () => {
    connection = await connect([SAMPLE_SKILLS], era, { skillsExtension: true });
    expect(connection.client.getInstructions()).toBe(SAMPLE_INSTRUCTIONS);
    expect((await connection.client.listTools()).tools).toEqual([]);
    expect((await connection.client.listPrompts()).prompts).toEqual([]);
    expect(await errorCodeOf(call('list_skills', {}))).toBe(-32602);
    expect(await errorCodeOf(connection.client.getPrompt({ name: 'pdf-summaries' }))).toBe(-32602);
    expect((await connection.skills.list()).skills).toHaveLength(6);
  });

  it('on: offers them anyway', async () => {
    connection = await connect([SAMPLE_SKILLS, '--compat', 'on'], era, { skillsExtension: true });
    expect((await connection.client.listTools()).tools).toHaveLength(4);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    expect((await call('read_skill', { name: 'pdf-summaries' })).content[0]).toEqual({
      type: 'text',
      text: disk('pdf-summaries/SKILL.md'),
    });
  });
});

describe.each(BOTH_ERAS)('era $label, a host that does not declare the extension but uses it', (era) => {
  it.each([
    ['skills/list', (c: Connection) => c.skills.list()],
    ['skills/get', (c: Connection) => c.skills.get('skill://pdf-summaries/SKILL.md')],
  ])('auto: after %s it is told tools and prompts changed, and then offered none', async (_method, use) => {
    connection = await connect([SAMPLE_SKILLS], era);
    const heard: string[] = [];
    connection.client.setNotificationHandler('notifications/tools/list_changed', () => {
      heard.push('tools');
    });
    connection.client.setNotificationHandler('notifications/prompts/list_changed', () => {
      heard.push('prompts');
    });
    if (era.label === '2026-07-28')
      await connection.client.listen({ toolsListChanged: true, promptsListChanged: true });
    expect((await connection.client.listTools()).tools).toHaveLength(4);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    await use(connection);
    await waitFor(() => heard.length === 2);
    expect(heard.sort()).toEqual(['prompts', 'tools']);
    expect((await connection.client.listTools()).tools).toEqual([]);
    expect((await connection.client.listPrompts()).prompts).toEqual([]);
    expect(await errorCodeOf(call('list_skills', {}))).toBe(-32602);
    // Once only: a second use sends nothing more (a later list_changed would have arrived before this answer).
    await connection.skills.list();
    expect(await rawRequest(connection, 'tools/list', {})).toMatchObject({ tools: [] });
    expect(heard).toHaveLength(2);
  });

  it('on: keeps offering them', async () => {
    connection = await connect([SAMPLE_SKILLS, '--compat', 'on'], era);
    await connection.skills.list();
    expect((await connection.client.listTools()).tools).toHaveLength(4);
  });
});

describe('era 2026-07-28, a host that declares the extension in a later request', () => {
  it('is offered tools until then, then none, and is told so through its listen stream', async () => {
    const server = spawnRaw([SAMPLE_SKILLS]);
    try {
      const envelope = (extensions: Record<string, unknown>) => ({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions },
      });
      const request = (
        id: number,
        method: string,
        params: Record<string, unknown>,
        extensions: Record<string, unknown> = {},
      ) => server.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(extensions) } });
      const answer = (id: number) => server.waitFor((message) => message['id'] === id);
      request(1, 'subscriptions/listen', { notifications: { toolsListChanged: true, promptsListChanged: true } });
      await server.waitFor((message) => message['method'] === 'notifications/subscriptions/acknowledged');
      request(2, 'tools/list', {});
      expect(((await answer(2))['result'] as { tools: unknown[] }).tools).toHaveLength(4);
      request(3, 'resources/read', { uri: 'skill://pdf-summaries/SKILL.md' }, { 'io.modelcontextprotocol/skills': {} });
      expect((await answer(3))['result']).toMatchObject({
        contents: [{ uri: 'skill://pdf-summaries/SKILL.md', text: disk('pdf-summaries/SKILL.md') }],
      });
      await server.waitFor((message) => message['method'] === 'notifications/tools/list_changed');
      await server.waitFor((message) => message['method'] === 'notifications/prompts/list_changed');
      // From then on, even a request without the declaration gets nothing.
      request(4, 'tools/list', {});
      expect((await answer(4))['result']).toMatchObject({ tools: [] });
      request(5, 'prompts/list', {});
      expect((await answer(5))['result']).toMatchObject({ prompts: [] });
    } finally {
      server.child.kill();
      await server.exited();
    }
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

describe('--instructions-max and SKILLS_SERVE_INSTRUCTIONS_MAX', () => {
  /** 40 skills whose catalog lines are 100 characters each: 4,000 characters of catalog. */
  const forty = (): Record<string, string> =>
    Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => {
        const name = `skill-${String(index).padStart(3, '0')}`;
        return [`${name}/SKILL.md`, skillMd(name, `Handles case ${String(index).padStart(3, '0')}.`.padEnd(58, '.'))];
      }),
    );
  const pointer = (listed: number) =>
    `${listed} of the 40 skills are listed below (to keep these instructions short). To find the others, call the search_skills tool with a few words from the task, or the list_skills tool for the full catalog.`;
  const lines = (count: number) =>
    Array.from(
      { length: count },
      (_, index) =>
        `- skill-${String(index).padStart(3, '0')} (skill://skill-${String(index).padStart(3, '0')}/SKILL.md): ${`Handles case ${String(index).padStart(3, '0')}.`.padEnd(58, '.')}`,
    );

  it.each([
    // 4,096 - (345 + 2 + 198 + 2 + 52) - 1 (room for a two-digit count) = 3,496: 34 lines of 101.
    ['the default', [], {}, 34],
    ['--instructions-max 1500', ['--instructions-max', '1500'], {}, 8],
    ['the environment twin', [], { SKILLS_SERVE_INSTRUCTIONS_MAX: '2000' }, 13],
  ])('%s bounds the instructions to whole lines, the pointer first', async (_label, flags, env, listed) => {
    const root = await temps.tree(forty());
    connection = await connect([root, ...flags], ERAS[1], { env });
    const text = connection.client.getInstructions() ?? '';
    expect(text).toBe(
      [INTRO, '', pointer(listed), '', 'Available skills (name (SKILL.md URI): description):', ...lines(listed)].join(
        '\n',
      ),
    );
  });

  it.each(['1023', '1000001', 'many'])('refuses --instructions-max %s with exit 2', (value) => {
    const run = cli(['--instructions-max', value, SAMPLE_SKILLS]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--instructions-max must be an integer from 1024 to 1000000 (got "${value}")`);
  });

  it.each(['-1', '30001', 'soon'])('refuses --instructions-wait %s with exit 2', (value) => {
    const run = cli(['--instructions-wait', value, SAMPLE_SKILLS]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--instructions-wait must be an integer from 0 to 30000 (got "${value}")`);
  });
});

describe('a first build slower than --instructions-wait', () => {
  it('answers initialize with instructions that point to list_skills; the tools then serve the whole catalog', async () => {
    const root = await temps.tempDir();
    // 3000 skills × 5 files: indexing 15 000 files takes far longer than the 0 ms initialize is allowed to wait.
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
    connection = await connect([root, '--no-watch', '--instructions-wait', '0']);
    const instructions = connection.client.getInstructions() ?? '';
    expect(instructions).toBe(
      `${INTRO}\n\nThe skill catalog was still being indexed when this session started: call the search_skills tool with a few words from the task, or the list_skills tool, to find the skills.`,
    );
    expect(instructions).not.toContain('skill-0000');
    const first = (await call('list_skills', {})).structuredContent as {
      skills: { name: string }[];
      nextCursor?: string;
    };
    expect(first.skills).toHaveLength(100);
    expect(first.skills[0]?.name).toBe('skill-0000');
    expect(first.nextCursor).toBeDefined();
    const prompts = await rawRequest(connection, 'prompts/list', {});
    expect(prompts['prompts']).toHaveLength(3000);
    expect(prompts['nextCursor']).toBeUndefined();
  });
});

describe.each(BOTH_ERAS)('era $label, live changes', (era) => {
  it('prompts and tools follow the current snapshot, and prompts/list_changed is sent when skills change', async () => {
    const root = await temps.tree({ 'alpha/SKILL.md': skillMd('alpha', 'First skill.') });
    connection = await connect([root], era);
    let promptsChanged = 0;
    connection.client.setNotificationHandler('notifications/prompts/list_changed', () => {
      promptsChanged++;
    });
    if (era.label === '2026-07-28') await connection.client.listen({ promptsListChanged: true });
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha']);
    await addToTree(root, { 'beta/SKILL.md': skillMd('beta', 'Second skill.') });
    await waitFor(() => promptsChanged > 0);
    expect((await connection.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha', 'beta']);
    expect((await call('read_skill', { name: 'beta' })).content[0]).toEqual({
      type: 'text',
      text: skillMd('beta', 'Second skill.'),
    });
  });
});

describe('--compat auto, 2025-11-25 host that declares the extension, live changes', () => {
  it('hears resources/list_changed but no prompts/list_changed', async () => {
    const root = await temps.tree({ 'alpha/SKILL.md': skillMd('alpha', 'First skill.') });
    connection = await connect([root], ERAS[1], { skillsExtension: true });
    let promptsChanged = 0;
    let resourcesChanged = 0;
    connection.client.setNotificationHandler('notifications/prompts/list_changed', () => {
      promptsChanged++;
    });
    connection.client.setNotificationHandler('notifications/resources/list_changed', () => {
      resourcesChanged++;
    });
    await connection.skills.list();
    await addToTree(root, { 'beta/SKILL.md': skillMd('beta', 'Second skill.') });
    await waitFor(async () => (await connection!.skills.list()).skills.length === 2 && resourcesChanged > 0);
    // A second change as a barrier: a prompts/list_changed of the first swap would have been written before this one's
    // resources/list_changed.
    const before = resourcesChanged;
    await addToTree(root, { 'gamma/SKILL.md': skillMd('gamma', 'Third skill.') });
    await waitFor(() => resourcesChanged > before);
    expect(promptsChanged).toBe(0);
  });
});
