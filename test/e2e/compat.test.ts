/**
 * `--compat auto|on|off` over real stdio: the instructions catalog (and its fallback while a slow first build runs),
 * the read-only tools, one prompt per skill, who is offered them (a host declaring the Skills extension is not, in
 * `auto`, in both eras), and prompts following live changes.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/live.js';
import { SAMPLE_CATALOG_LINES } from '../helpers/sample.js';
import { connect, errorCodeOf, ERAS, rawRequest, SAMPLE_SKILLS, type Connection } from '../helpers/server.js';
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
  'Available skills (name (SKILL.md URI): description):',
  ...SAMPLE_CATALOG_LINES,
].join('\n');

const disk = (rel: string): string => readFileSync(path.join(SAMPLE_SKILLS, rel), 'utf8');

type Content = Record<string, unknown>[];
/** Calls a tool; the result without `_meta` (2026-07-28 results carry the server's identity there). */
async function call(name: string, args: Record<string, unknown>): Promise<{ content: Content; isError?: boolean; structuredContent?: unknown }> {
  const { _meta: _ignored, ...result } = await connection!.client.callTool({ name, arguments: args });
  return result as { content: Content; isError?: boolean; structuredContent?: unknown };
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

  it('lists three read-only tools, and list_skills returns every skill as JSON text and structured content', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const { tools } = await connection.client.listTools();
    expect(tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties ?? {})])).toEqual([
      ['list_skills', ['cursor']],
      ['read_skill', ['name', 'uri']],
      ['read_skill_file', ['uri', 'skill', 'path']],
    ]);
    for (const tool of tools) expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const { skills } = await connection.skills.list();
    const expected = { skills: skills.map((skill) => ({ name: skill.frontmatter.name, description: skill.frontmatter.description, uri: skill.uri })) };
    const result = await call('list_skills', {});
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(expected);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(expected, null, 2) }]);
    expect(await call('list_skills', { cursor: 'bogus' })).toEqual(
      errorText('Invalid cursor: it was not issued by this server; call list_skills without a cursor to start over.'),
    );
  });

  it('read_skill returns SKILL.md verbatim and the skill\'s other files; a shared name lists the URIs to choose from', async () => {
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
      errorText(`2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`),
    );
    const support = await call('read_skill', { uri: SUPPORT });
    expect(support.content[0]).toEqual({ type: 'text', text: disk('acme/support/refunds/SKILL.md') });
    expect(support.content[1]).toEqual({ type: 'text', text: `Skill "refunds" at ${SUPPORT}. It has no other files.` });
    expect(await call('read_skill', { name: 'nope' })).toEqual(errorText('No served skill is named "nope". Call the list_skills tool to see the available skills.'));
    expect(await call('read_skill', {})).toEqual(errorText("Give the skill's name, or its uri when several skills share a name."));
  });

  it('read_skill_file reads text verbatim, images as image blocks, directories as listings, and refuses escapes', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const policy = { content: [{ type: 'text', text: disk('acme/billing/refunds/references/policy.md') }] };
    expect(await call('read_skill_file', { uri: 'skill://acme/billing/refunds/references/policy.md' })).toMatchObject(policy);
    expect(await call('read_skill_file', { skill: BILLING, path: 'references/policy.md' })).toMatchObject(policy);
    expect((await call('read_skill_file', { skill: 'data-pipeline', path: 'scripts/validate.py' })).content).toEqual([{ type: 'text', text: disk('data-pipeline/scripts/validate.py') }]);
    expect((await call('read_skill_file', { skill: 'report-writer', path: 'assets/logo.png' })).content).toEqual([
      { type: 'text', text: `skill://report-writer/assets/logo.png is an image (image/png, ${readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')).length} bytes).` },
      { type: 'image', mimeType: 'image/png', data: readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')).toString('base64') },
    ]);
    expect((await call('read_skill_file', { uri: 'skill://report-writer/templates' })).content).toEqual([
      { type: 'text', text: 'skill://report-writer/templates is a directory. Its entries (read one with read_skill_file):\n- report.md\n- sections/' },
    ]);
    expect(await call('read_skill_file', { skill: 'report-writer', path: '../pdf-summaries/SKILL.md' })).toEqual(
      errorText('path "../pdf-summaries/SKILL.md" must stay inside the skill: ".." is not allowed.'),
    );
    expect(await call('read_skill_file', { skill: 'refunds', path: 'references/policy.md' })).toEqual(
      errorText(`2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`),
    );
    expect(await call('read_skill_file', { uri: 'file:///etc/passwd' })).toEqual(errorText("No served file has the URI file:///etc/passwd. Call read_skill to see a skill's files."));
    expect(await call('read_skill_file', { uri: 42 })).toEqual(errorText('argument "uri" must be a string'));
    expect(await errorCodeOf(call('write_skill', {}))).toBe(-32602);
  });

  it('offers one prompt per skill, shared names disambiguated by skill path, each bringing its SKILL.md', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const { prompts } = await connection.client.listPrompts();
    const { skills } = await connection.skills.list();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['acme-billing-refunds', 'acme-support-refunds', 'data-pipeline', 'csv-cleaning', 'pdf-summaries', 'report-writer']);
    expect(prompts.map((prompt) => prompt.description)).toEqual(skills.map((skill) => skill.frontmatter.description));
    const prompt = await connection.client.getPrompt({ name: 'acme-support-refunds' });
    expect(prompt.description).toBe(skills.find((skill) => skill.uri === SUPPORT)?.frontmatter.description);
    expect(prompt.messages).toEqual([
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Use the "refunds" skill (${SUPPORT}) for this task. Its SKILL.md follows; read the other files it mentions with the read_skill_file tool.`,
        },
      },
      { role: 'user', content: { type: 'resource', resource: { uri: SUPPORT, mimeType: 'text/markdown', text: disk('acme/support/refunds/SKILL.md') } } },
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
    expect((await connection.client.listTools()).tools).toHaveLength(3);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(6);
    expect((await call('read_skill', { name: 'pdf-summaries' })).content[0]).toEqual({ type: 'text', text: disk('pdf-summaries/SKILL.md') });
  });
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

describe('a first build slower than the catalog wait', () => {
  it('answers initialize with instructions that point to list_skills; the tools then serve the whole catalog', async () => {
    const root = await temps.tempDir();
    // 3000 skills × 5 files: hashing 15 000 files takes well over the 300 ms the catalog may hold initialize back.
    const writeSkill = async (index: number): Promise<void> => {
      const name = `skill-${String(index).padStart(4, '0')}`;
      const dir = path.join(root, name);
      await fsp.mkdir(path.join(dir, 'references'), { recursive: true });
      await Promise.all([
        fsp.writeFile(path.join(dir, 'SKILL.md'), skillMd(name, `Generated skill number ${index}.`)),
        ...[1, 2, 3, 4].map((file) => fsp.writeFile(path.join(dir, 'references', `ref-${file}.md`), `Reference ${file} of ${name}.\n`)),
      ]);
    };
    for (let start = 0; start < 3000; start += 100) await Promise.all(Array.from({ length: 100 }, (_, offset) => writeSkill(start + offset)));
    connection = await connect([root, '--no-watch']);
    const instructions = connection.client.getInstructions() ?? '';
    expect(instructions).toBe(
      `${INTRO}\n\nThe skill catalog was still being indexed when this session started: call the list_skills tool to see the available skills.`,
    );
    expect(instructions).not.toContain('skill-0000');
    const first = (await call('list_skills', {})).structuredContent as { skills: { name: string }[]; nextCursor?: string };
    expect(first.skills).toHaveLength(100);
    expect(first.skills[0]?.name).toBe('skill-0000');
    expect(first.nextCursor).toBeDefined();
    const prompts = await rawRequest(connection, 'prompts/list', {});
    expect(prompts['prompts']).toHaveLength(100);
    expect(prompts['nextCursor']).toBe(first.nextCursor);
    expect((await connection.client.listPrompts()).prompts).toHaveLength(3000);
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
    expect((await call('read_skill', { name: 'beta' })).content[0]).toEqual({ type: 'text', text: skillMd('beta', 'Second skill.') });
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
