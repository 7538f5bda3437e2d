/**
 * Claude Code 2.1.332 against skills-serve, offline, as a user wires it (project `.mcp.json`, approved in user
 * settings): `claude mcp list`, then an interactive session under tmux: `/mcp`, a first turn (what reaches the model:
 * the server instructions, within budget, pointer intact), a prompt run as a slash command (its SKILL.md reaches the
 * model verbatim), a live edit followed, and stderr as Claude Code records it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { expect, it } from 'vitest';

import { waitFor } from '../helpers/live.js';
import { addSkillWhileRunning, describeHostCases, INSTRUCTIONS, promptManifest, published } from './cases.js';
import {
  collapse,
  expectDiscoverable,
  firstModelRequest,
  timeline,
  timelineLine,
  wireCatalog,
} from './discoverability.js';
import { STEP_MS, type TmuxSession } from './harness.js';
import {
  catalogLines,
  checkServed,
  loadedTexts,
  LOOP_PROMPT,
  loopOutcome,
  readUris,
  SCRIPT_MARKER,
  scriptLoop,
  servedTexts,
} from './loop.js';
import { scriptedTurns } from './model-api.js';

const BUDGET = 4096;
const HOST = 'Claude Code 2.1.332';
/** What the user asks in a measured `claude -p` run. */
const PROBE = 'Which skills can you use here? (DISCOVERABILITY-PROBE)';
const INSTRUCTIONS_HEADER =
  '# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## skills\n';

/** Every text block of the messages of one Messages API request body. */
function texts(body: string): string[] {
  const request = JSON.parse(body) as { messages?: { content: string | { type: string; text?: string }[] }[] };
  return (request.messages ?? []).flatMap((message) =>
    typeof message.content === 'string'
      ? [message.content]
      : message.content.flatMap((block) => (typeof block.text === 'string' ? [block.text] : [])),
  );
}

describeHostCases(HOST, 'claude', (hostCase, ctx) => {
  let session: TmuxSession;

  it('claude mcp list: connected, over 2026-07-28', () => {
    const run = ctx.user.offline(['mcp', 'list']);
    expect(run.stdout).toMatch(/^skills: .*skills-serve\.js .* - ✔ Connected$/mu);
    const [probe] = ctx.user.requests('server/discover');
    expect(
      (probe?.['params'] as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/protocolVersion'],
    ).toBe('2026-07-28');
  });

  it('interactive: lists every tool, resource and prompt in one request each, and /mcp shows them', async () => {
    const before = ctx.user.requests('prompts/list').length;
    session = ctx.user.session();
    await session.waitForPane((pane) => pane.includes('Claude Code v2.1.332') && /^❯/mu.test(pane), 'the input prompt');
    const listed = (): boolean =>
      ctx.user.results('prompts/list').length > before &&
      ctx.user.results('resources/list').length > 0 &&
      ctx.user.results('tools/list').length > 0;
    await session.waitForPane(listed, 'tools/list, prompts/list and resources/list answered');
    const prompts = ctx.user.results('prompts/list').at(-1) as { prompts: unknown[]; nextCursor?: string };
    expect(prompts.prompts).toHaveLength(ctx.expected.skills);
    expect(prompts.nextCursor).toBeUndefined();
    expect(ctx.user.requests('prompts/list').length - before).toBe(1);

    await session.submit('/mcp');
    await session.waitForPane(
      (pane) => pane.includes('MCP servers') && pane.includes('❯ ✔ skills'),
      'the /mcp server list',
    );
    session.press('Enter');
    const details = await session.waitForPane((pane) => pane.includes('Capabilities:'), 'the server details');
    expect(details).toMatch(/Status: +✔ connected/u);
    expect(details).toMatch(/Protocol: +2026-07-28/u);
    expect(details).toContain(
      `Capabilities:     4 tools · ${ctx.expected.files} resources · ${ctx.expected.skills} prompts`,
    );
    session.press('Escape');
    await session.waitForPane((pane) => !pane.includes('Capabilities:'), 'the server details closed');
    session.press('Escape');
    await session.waitForPane((pane) => !pane.includes('MCP servers'), 'the /mcp view closed');
  });

  it('the first turn gives the model the server instructions whole (they name no skill), and each skill the catalog holds once', async () => {
    const sent = ctx.user.modelRequests().length;
    await session.submit('hello');
    await session.waitForPane(
      () =>
        ctx.user
          .modelRequests()
          .slice(sent)
          .some((request) => request.url.startsWith('/v1/messages')),
      'a request to the model',
    );
    const [discovered] = ctx.user.results('server/discover').slice(-1) as { instructions: string }[];
    const instructions = discovered?.instructions ?? '';
    expect(instructions).toBe(INSTRUCTIONS);
    expect(instructions.length).toBeLessThanOrEqual(BUDGET);
    const modelTexts = ctx.user
      .modelRequests()
      .slice(sent)
      .flatMap((request) => texts(request.body));
    const block = modelTexts.find((text) => text.includes(INSTRUCTIONS_HEADER));
    expect(block, 'the MCP Server Instructions block').toBeDefined();
    expect(block).toContain(`${INSTRUCTIONS_HEADER}${instructions}`);
    expect(block).not.toContain('[truncated]');
    expect(block).not.toContain('[cut short]');
    await session.waitForPane((pane) => pane.includes('FAKE-MODEL-REPLY'), 'the reply');
    expectDiscoverable(ctx.user, {
      host: `${HOST} (interactive)`,
      tree: hostCase.label,
      prompt: 'hello',
      from: sent,
      skills: ctx.expected.entries,
    });
  });

  it(`/skills:${hostCase.prompt.name} sends the model its SKILL.md verbatim, with its URI`, async () => {
    const sent = ctx.user.modelRequests().length;
    await session.submit(`/skills:${hostCase.prompt.name}`);
    const manifest = promptManifest(ctx.tree, hostCase);
    const carries = (): boolean =>
      ctx.user
        .modelRequests()
        .slice(sent)
        .some((request) => texts(request.body).some((text) => text.includes(manifest)));
    await session.waitForPane(carries, 'a model request holding the SKILL.md');
    const [got] = ctx.user.results('prompts/get').slice(-1) as {
      messages: { content: { type: string; text: string } }[];
    }[];
    expect(got?.messages).toHaveLength(1);
    expect(got?.messages[0]?.content.text).toContain(`(skill://${hostCase.prompt.file})`);
    expect(got?.messages[0]?.content.text.endsWith(`\n\n${manifest}`)).toBe(true);
  });

  it.skipIf(!hostCase.live)('follows a live edit: a skill added while it runs shows in /mcp', async () => {
    await addSkillWhileRunning(ctx, session);
    await session.submit('/mcp');
    await session.waitForPane((pane) => pane.includes('❯ ✔ skills'), 'the /mcp server list');
    session.press('Enter');
    const details = await session.waitForPane((pane) => pane.includes('Capabilities:'), 'the server details');
    expect(details).toContain(
      `Capabilities:     4 tools · ${ctx.expected.files + 1} resources · ${ctx.expected.skills + 1} prompts`,
    );
    session.press('Escape');
    session.press('Escape');
  });

  it.skipIf(!hostCase.loop)(
    'scripted model, claude -p: mcp__skills__read_skill, offered in full, then read_skill_file; both reach the model verbatim',
    () => {
      // The extension client is off (a remote flag, unreachable offline): the model loads a skill through our tool,
      // which Claude Code offers in full from the first request (anthropic/alwaysLoad), not behind ToolSearch.
      scriptLoop(ctx.user, { readSkill: 'mcp__skills__read_skill', readSkillFile: 'mcp__skills__read_skill_file' });
      const run = ctx.user.offline([
        '-p',
        LOOP_PROMPT,
        '--allowedTools',
        'mcp__skills__read_skill,mcp__skills__read_skill_file',
      ]);
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
      const outcome = loopOutcome(ctx.user);
      checkServed(outcome, ctx.tree);
      const texts = loadedTexts(ctx.tree);
      expect(outcome.turns).toHaveLength(3);
      const [first] = outcome.turns;
      const offered = (first?.body['tools'] ?? []) as {
        name: string;
        description?: string;
        defer_loading?: boolean;
      }[];
      const ours = offered.filter((tool) => tool.name.startsWith('mcp__skills__'));
      expect(ours.map((tool) => [tool.name, tool.defer_loading])).toEqual([
        ['mcp__skills__list_skills', undefined],
        ['mcp__skills__read_skill', undefined],
        ['mcp__skills__read_skill_file', undefined],
        ['mcp__skills__search_skills', undefined],
      ]);
      // read_skill's description as the server sent it (within Claude Code's 4,096 characters): each served skill
      // once.
      const listed = ctx.user.results('tools/list').at(-1) as { tools: { name: string; description: string }[] };
      const served = listed.tools.find((tool) => tool.name === 'read_skill')?.description;
      expect(served?.length).toBeLessThanOrEqual(BUDGET);
      const readSkill = ours.find((tool) => tool.name === 'mcp__skills__read_skill');
      expect(readSkill?.description).toBe(served);
      expect(catalogLines(readSkill?.description)).toHaveLength(published(ctx.tree).skills);
      expect(readUris(ctx.user)).not.toContain('skill://index.json');
      expect(outcome.answered(1)?.name).toBe('mcp__skills__read_skill');
      expect(outcome.answered(1)?.result).toEqual(outcome.served.skill);
      expect(outcome.answered(1)?.result?.[1]).toBe(texts.skill);
      expect(outcome.answered(2)?.name).toBe('mcp__skills__read_skill_file');
      expect(outcome.answered(2)?.result).toEqual([texts.file]);
    },
  );

  it('records in its MCP log only what the server wrote to stderr: nothing on a clean tree', async () => {
    const logs = path.join(ctx.user.home, '.cache', 'claude-cli-nodejs');
    const recordedLines = (): string[] =>
      readdirSync(logs, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.parentPath.endsWith('mcp-logs-skills'))
        .map((entry) => path.join(entry.parentPath, entry.name))
        .sort()
        .flatMap((file) => readFileSync(file, 'utf8').split('\n'))
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { error?: string })
        .flatMap((entry) =>
          entry.error?.startsWith('Server stderr: ') === true
            ? entry.error.slice('Server stderr: '.length).split('\n')
            : [],
        )
        .filter((line) => line !== '');
    const written = ctx.user.serverStderr();
    // Claude Code records a stderr line only while it listens: a start's summary line written after a short
    // command (`claude mcp list`) closed the server, as on a loaded machine, is not recorded. Every recorded line is
    // one the server wrote, in order, and at least one is recorded whenever the server wrote any.
    await waitFor(() => recordedLines().length > 0 || written.length === 0, {
      timeoutMs: STEP_MS,
      intervalMs: 100,
    }).catch(() => undefined);
    const recorded = recordedLines();
    expect(recorded.length > 0).toBe(written.length > 0);
    expect(written.filter((line) => recorded.includes(line))).toEqual(recorded);
    // One line per server start on the corpus (claude-api's description is over 1,024 characters); none elsewhere.
    const perStart = hostCase.label === 'the shared anthropics-skills corpus' ? [['description-length']] : [];
    expect(written.map((line) => (JSON.parse(line) as { rules: string[] }).rules)).toEqual(
      Array.from({ length: ctx.user.serverStarts() }, () => perStart).flat(),
    );
  });
});

// claude -p sends its first request about 2 s after it starts the MCP servers, connected or not, unless a server's
// entry says "alwaysLoad": true (README): then it waits for that server, up to its 5 s connect timeout. Configured
// so, as README recommends, the catalog is in the first request from a cold start (an empty cache directory) and
// from a warm one (the same cache, again), whatever the load; the timeline printed says how long the server took.
describeHostCases(
  `${HOST}, claude -p`,
  'claude',
  (hostCase, ctx) => {
    for (const start of ['cold', 'warm'] as const) {
      it(`${start} cache: the first request describes every skill the catalog holds, once`, () => {
        const sent = ctx.user.modelRequests().length;
        // Cold: the cache directory is empty; warm: the cold run filled it.
        expect(readdirSync(ctx.cache ?? '').length > 0).toBe(start === 'warm');
        const run = ctx.user.offline(['-p', PROBE]);
        expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
        const label = `${HOST} (claude -p, ${start} cache)`;
        process.stdout.write(
          `${timelineLine(`${label} on ${hostCase.label}`, timeline(ctx.user, firstModelRequest(ctx.user, PROBE, sent)?.at))}\n`,
        );
        expectDiscoverable(ctx.user, {
          host: label,
          tree: hostCase.label,
          prompt: PROBE,
          from: sent,
          skills: ctx.expected.entries,
        });
      });
    }

    const beyond = hostCase.beyond;
    it.skipIf(beyond === undefined)(
      `a skill past the catalog: search_skills finds ${beyond?.name}, read_skill sends the model its SKILL.md verbatim`,
      () => {
        if (beyond === undefined) return;
        const index = ctx.expected.entries.findIndex((entry) => entry.name === beyond.name);
        // The catalog the server sent in the last run does not name it.
        expect(index).toBeGreaterThan(-1);
        expect(wireCatalog(ctx.user, ctx.expected.entries).shown).not.toContain(index);
        ctx.user.script(SCRIPT_MARKER, [
          { name: 'mcp__skills__search_skills', arguments: { query: beyond.query } },
          { name: 'mcp__skills__read_skill', arguments: { name: beyond.name } },
        ]);
        const run = ctx.user.offline([
          '-p',
          `Use the skill for ${beyond.query} (${SCRIPT_MARKER}).`,
          '--allowedTools',
          'mcp__skills__search_skills,mcp__skills__read_skill',
        ]);
        expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
        const turns = scriptedTurns(ctx.user.modelRequests(), SCRIPT_MARKER);
        expect(turns).toHaveLength(3);
        const found = servedTexts(ctx.user, 'search_skills');
        const [best] = (JSON.parse(found[0] ?? '{}') as { skills?: { name: string; uri: string }[] }).skills ?? [];
        expect(best).toEqual({
          name: beyond.name,
          description: collapse(ctx.expected.entries[index]?.description ?? ''),
          uri: `skill://${beyond.file}`,
        });
        expect(turns[1]?.turns.at(-1)?.name).toBe('mcp__skills__search_skills');
        expect(turns[1]?.turns.at(-1)?.result).toEqual(found);
        const read = servedTexts(ctx.user, 'read_skill');
        expect(read[1]).toBe(readFileSync(path.join(ctx.tree, beyond.file), 'utf8'));
        expect(turns[2]?.turns.at(-1)?.name).toBe('mcp__skills__read_skill');
        expect(turns[2]?.turns.at(-1)?.result).toEqual(read);
      },
    );
  },
  { ownCache: true, alwaysLoad: true },
);
