/**
 * Gemini CLI 0.61.0 against skills-serve, offline, as a user wires it (`mcpServers` in `~/.gemini/settings.json`,
 * the project folder trusted): `gemini mcp list`, `gemini -p` (what reaches the model: the server instructions, and a
 * prompt's first message, the only one it keeps), then an interactive session under tmux: `/mcp list` and a live
 * edit followed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOST_CASES, INSTRUCTIONS, promptManifest, type Published, published, removeCaseTrees } from './cases.js';
import { expectDiscoverable } from './discoverability.js';
import { HostUser, type TmuxSession } from './harness.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

const BUDGET = 4096;
/** The completion line Gemini CLI shows under the input while `/mcp list` is typed. */
const MCP_LIST_COMPLETION = 'List configured MCP servers and tools';

afterAll(removeCaseTrees);

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

for (const hostCase of HOST_CASES) {
  if (hostCase.skip !== undefined) process.stdout.write(`skipping ${hostCase.label}: ${hostCase.skip}\n`);
  describe.skipIf(hostCase.skip !== undefined)(`Gemini CLI 0.61.0 on ${hostCase.label}`, () => {
    let tree: string;
    let expected: Published;
    let user: HostUser;
    let session: TmuxSession;
    beforeAll(() => {
      tree = hostCase.prepare();
      expected = published(tree);
      user = new HostUser('gemini', [tree, ...hostCase.flags]);
    });
    afterAll(async () => user?.close());

    it('gemini mcp list: connected, over 2025-06-18', () => {
      // Gemini CLI prints the list on stderr.
      const run = user.offline(['mcp', 'list']);
      expect(run.stderr).toMatch(/^✓ skills: .*skills-serve\.js .* \(stdio\) - Connected$/mu);
      const [initialize] = user.requests('initialize');
      expect((initialize?.['params'] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
      expect((user.results('initialize')[0] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
    });

    it('gemini -p: the model gets the server instructions whole (they name no skill), and each skill the catalog holds once', () => {
      const sent = user.modelRequests().length;
      const run = user.offline(['-p', 'hello']);
      expect(run.stdout).toContain('FAKE-MODEL-REPLY');
      const instructions = (user.results('initialize').at(-1) as { instructions: string }).instructions;
      expect(instructions).toBe(INSTRUCTIONS);
      expect(instructions.length).toBeLessThanOrEqual(BUDGET);
      const [first] = turns(user, sent);
      const block = `The following are instructions provided by the tool server 'skills':\n---[start of server instructions]---\n${instructions}\n---[end of server instructions]---`;
      expect(first?.[0]).toContain(block);
      expectDiscoverable(user, {
        host: 'Gemini CLI 0.61.0 (gemini -p)',
        tree: hostCase.label,
        prompt: 'hello',
        from: sent,
        skills: expected.entries,
      });
    });

    it(`gemini -p /${hostCase.prompt.name}: the first message, the one it keeps, holds the SKILL.md verbatim`, () => {
      const sent = user.modelRequests().length;
      const run = user.offline(['-p', `/${hostCase.prompt.name}`]);
      expect(run.stdout).toContain('FAKE-MODEL-REPLY');
      const [got] = user.results('prompts/get').slice(-1) as {
        messages: { content: { type: string; text: string } }[];
      }[];
      const text = got?.messages[0]?.content.text ?? '';
      expect(got?.messages).toHaveLength(1);
      expect(text).toContain(`(skill://${hostCase.prompt.file})`);
      expect(text.endsWith(`\n\n${promptManifest(tree, hostCase)}`)).toBe(true);
      // Gemini CLI submits the first message's text JSON-encoded, as the user's message.
      const [turn] = turns(user, sent);
      expect(turn?.at(-1)).toBe(JSON.stringify(text));
    });

    it.skipIf(!hostCase.loop)(
      'scripted model, gemini -p: mcp_skills_read_skill, then mcp_skills_read_skill_file; both reach the model verbatim',
      () => {
        scriptLoop(user, { readSkill: 'mcp_skills_read_skill', readSkillFile: 'mcp_skills_read_skill_file' });
        const run = user.offline(['-p', LOOP_PROMPT]);
        expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
        const outcome = loopOutcome(user);
        checkServed(outcome, tree);
        const texts = loadedTexts(tree);
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
        expect(catalogLines(readSkill?.description)).toHaveLength(published(tree).skills);
        expect(readUris(user)).not.toContain('skill://index.json');
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
      const starts = user.serverStarts();
      const before = { tools: user.results('tools/list').length, prompts: user.results('prompts/list').length };
      session = user.session();
      await session.waitForPane((pane) => pane.includes('Type your message'), 'the input prompt');
      // The session's own server answered its tools/list, prompts/list and last resources/list page.
      const listed = (): boolean => {
        const pages = user.results('resources/list') as { nextCursor?: string }[];
        return (
          user.serverStarts() > starts &&
          user.results('tools/list').length > before.tools &&
          user.results('prompts/list').length > before.prompts &&
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
      expect(pane).toContain(`🟢 skills - Ready (4 tools, ${expected.skills} prompts, ${expected.files} resources)`);
      const prompts = user.results('prompts/list').at(-1) as { prompts: unknown[]; nextCursor?: string };
      expect(prompts.prompts).toHaveLength(expected.skills);
      expect(prompts.nextCursor).toBeUndefined();
    });

    it.skipIf(!hostCase.live)('follows a live edit: a skill added while it runs shows in /mcp list', async () => {
      const promptsChanged = user.notifications('notifications/prompts/list_changed').length;
      mkdirSync(path.join(tree, 'live-added'));
      writeFileSync(
        path.join(tree, 'live-added', 'SKILL.md'),
        '---\nname: live-added\ndescription: Added while the host runs.\n---\n# Live\n',
      );
      await session.waitForPane(
        () =>
          user.notifications('notifications/prompts/list_changed').length > promptsChanged &&
          (user.results('prompts/list').at(-1) as { prompts: unknown[] }).prompts.length === expected.skills + 1,
        'prompts/list_changed and a new prompts/list',
      );
      await session.submit('/mcp list', MCP_LIST_COMPLETION);
      const pane = await session.waitForPane(
        (text) => text.includes(`${expected.skills + 1} prompts`),
        '/mcp list with the new prompt',
        undefined,
        2000,
      );
      expect(pane).toContain(
        `🟢 skills - Ready (4 tools, ${expected.skills + 1} prompts, ${expected.files + 1} resources)`,
      );
    });
  });
}
