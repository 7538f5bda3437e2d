/**
 * Gemini CLI 0.61.0 against skills-serve, offline, as a user wires it (`mcpServers` in `~/.gemini/settings.json`,
 * the project folder trusted): `gemini mcp list`, `gemini -p` (what reaches the model: the server instructions, and a
 * prompt's first message, the only one it keeps), then an interactive session under tmux: `/mcp list` and a live
 * edit followed.
 */
import { expect, it } from 'vitest';

import { addSkillWhileRunning, describeHostCases, INSTRUCTIONS, promptManifest, published } from './cases.js';
import { expectDiscoverable } from './discoverability.js';
import type { HostUser, TmuxSession } from './harness.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

const BUDGET = 4096;
/** The completion line Gemini CLI shows under the input while `/mcp list` is typed. */
const MCP_LIST_COMPLETION = 'List configured MCP servers and tools';

/** The user-message texts of one generateContent request body. */
function userTexts(body: string): string[] {
  const request = JSON.parse(body) as { contents?: { role: string; parts: { text?: string }[] }[] };
  return (request.contents ?? [])
    .filter((content) => content.role === 'user')
    .flatMap((content) => content.parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])));
}

/** The main-model requests (the router's small-model rating calls left out). */
function turns(user: HostUser, from: number): string[][] {
  return user
    .modelRequests()
    .slice(from)
    .filter((request) => request.url.includes(':streamGenerateContent'))
    .map((request) => userTexts(request.body));
}

describeHostCases('Gemini CLI 0.61.0', 'gemini', (hostCase, ctx) => {
  let session: TmuxSession;

  it('gemini mcp list: connected, over 2025-06-18', () => {
    // Gemini CLI prints the list on stderr.
    const run = ctx.user.offline(['mcp', 'list']);
    expect(run.stderr).toMatch(/^✓ skills: .*skills-serve\.js .* \(stdio\) - Connected$/mu);
    const [initialize] = ctx.user.requests('initialize');
    expect((initialize?.['params'] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
    expect((ctx.user.results('initialize')[0] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
  });

  it('gemini -p: the model gets the server instructions whole (they name no skill), and each skill the catalog holds once', () => {
    const sent = ctx.user.modelRequests().length;
    const run = ctx.user.offline(['-p', 'hello']);
    expect(run.stdout).toContain('FAKE-MODEL-REPLY');
    const instructions = (ctx.user.results('initialize').at(-1) as { instructions: string }).instructions;
    expect(instructions).toBe(INSTRUCTIONS);
    expect(instructions.length).toBeLessThanOrEqual(BUDGET);
    const [first] = turns(ctx.user, sent);
    const block = `The following are instructions provided by the tool server 'skills':\n---[start of server instructions]---\n${instructions}\n---[end of server instructions]---`;
    expect(first?.[0]).toContain(block);
    expectDiscoverable(ctx.user, {
      host: 'Gemini CLI 0.61.0 (gemini -p)',
      tree: hostCase.label,
      prompt: 'hello',
      from: sent,
      skills: ctx.expected.entries,
    });
  });

  it(`gemini -p /${hostCase.prompt.name}: the first message, the one it keeps, holds the SKILL.md verbatim`, () => {
    const sent = ctx.user.modelRequests().length;
    const run = ctx.user.offline(['-p', `/${hostCase.prompt.name}`]);
    expect(run.stdout).toContain('FAKE-MODEL-REPLY');
    const [got] = ctx.user.results('prompts/get').slice(-1) as {
      messages: { content: { type: string; text: string } }[];
    }[];
    const text = got?.messages[0]?.content.text ?? '';
    expect(got?.messages).toHaveLength(1);
    expect(text).toContain(`(skill://${hostCase.prompt.file})`);
    expect(text.endsWith(`\n\n${promptManifest(ctx.tree, hostCase)}`)).toBe(true);
    // Gemini CLI submits the first message's text JSON-encoded, as the user's message.
    const [turn] = turns(ctx.user, sent);
    expect(turn?.at(-1)).toBe(JSON.stringify(text));
  });

  it.skipIf(!hostCase.loop)(
    'scripted model, gemini -p: mcp_skills_read_skill, then mcp_skills_read_skill_file; both reach the model verbatim',
    () => {
      scriptLoop(ctx.user, { readSkill: 'mcp_skills_read_skill', readSkillFile: 'mcp_skills_read_skill_file' });
      const run = ctx.user.offline(['-p', LOOP_PROMPT]);
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
      const outcome = loopOutcome(ctx.user);
      checkServed(outcome, ctx.tree);
      const texts = loadedTexts(ctx.tree);
      expect(outcome.turns).toHaveLength(3);
      expect(outcome.turns[0]?.tools).toEqual(
        expect.arrayContaining([
          'mcp_skills_list_skills',
          'mcp_skills_search_skills',
          'mcp_skills_read_skill',
          'mcp_skills_read_skill_file',
        ]),
      );
      const declarations = (
        (outcome.turns[0]?.body['tools'] ?? []) as {
          functionDeclarations?: { name: string; description: string }[];
        }[]
      ).flatMap((tool) => tool.functionDeclarations ?? []);
      const readSkill = declarations.find((declaration) => declaration.name === 'mcp_skills_read_skill');
      expect(catalogLines(readSkill?.description)).toHaveLength(published(ctx.tree).skills);
      expect(readUris(ctx.user)).not.toContain('skill://index.json');
      // Gemini CLI passes each text block on inside <untrusted_context> tags, one output string per call.
      const wrap = (blocks: readonly string[]): string[] => [
        blocks.map((text) => `<untrusted_context>\n${text}\n</untrusted_context>`).join('\n'),
      ];
      expect(outcome.answered(1)?.name).toBe('mcp_skills_read_skill');
      expect(outcome.answered(1)?.result).toEqual(wrap(outcome.served.skill));
      expect(outcome.answered(1)?.result?.[0]).toContain(`\n${texts.skill}\n`);
      expect(outcome.answered(2)?.name).toBe('mcp_skills_read_skill_file');
      expect(outcome.answered(2)?.result).toEqual(wrap([texts.file]));
    },
  );

  it('interactive: /mcp list shows every tool, prompt and resource (prompts/list read in one page)', async () => {
    const starts = ctx.user.serverStarts();
    const before = { tools: ctx.user.results('tools/list').length, prompts: ctx.user.results('prompts/list').length };
    session = ctx.user.session();
    await session.waitForPane((pane) => pane.includes('Type your message'), 'the input prompt');
    // The session's own server answered its tools/list, prompts/list and last resources/list page.
    const listed = (): boolean => {
      const pages = ctx.user.results('resources/list') as { nextCursor?: string }[];
      return (
        ctx.user.serverStarts() > starts &&
        ctx.user.results('tools/list').length > before.tools &&
        ctx.user.results('prompts/list').length > before.prompts &&
        pages.length > 0 &&
        pages.at(-1)?.nextCursor === undefined
      );
    };
    await session.waitForPane(listed, 'the session listed tools, prompts and every resources page');
    await session.submit('/mcp list', MCP_LIST_COMPLETION);
    const pane = await session.waitForPane(
      (text) => text.includes('🟢 skills - Ready ('),
      '/mcp list with its counts',
      undefined,
      2000,
    );
    expect(pane).toContain(
      `🟢 skills - Ready (4 tools, ${ctx.expected.skills} prompts, ${ctx.expected.files} resources)`,
    );
    const prompts = ctx.user.results('prompts/list').at(-1) as { prompts: unknown[]; nextCursor?: string };
    expect(prompts.prompts).toHaveLength(ctx.expected.skills);
    expect(prompts.nextCursor).toBeUndefined();
  });

  it.skipIf(!hostCase.live)('follows a live edit: a skill added while it runs shows in /mcp list', async () => {
    await addSkillWhileRunning(ctx, session);
    await session.submit('/mcp list', MCP_LIST_COMPLETION);
    const pane = await session.waitForPane(
      (text) => text.includes(`${ctx.expected.skills + 1} prompts`),
      '/mcp list with the new prompt',
      undefined,
      2000,
    );
    expect(pane).toContain(
      `🟢 skills - Ready (4 tools, ${ctx.expected.skills + 1} prompts, ${ctx.expected.files + 1} resources)`,
    );
  });
});
