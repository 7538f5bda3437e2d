/**
 * opencode 1.18.33 against skills-serve, offline, as a user wires it (`~/.config/opencode/opencode.json`: a custom
 * OpenAI-compatible provider, here the stand-in model over Chat Completions, and the server as a local MCP server):
 * `opencode mcp list`, what `opencode run` gives the model (the server instructions in the system prompt, our tools
 * as `skills_*`, each skill the catalog holds described once), and, on `sample-skills/`, the scripted loop:
 * read_skill, then read_skill_file, each result in the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOST_CASES, INSTRUCTIONS, type Published, published, removeCaseTrees } from './cases.js';
import { expectDiscoverable, firstModelRequest } from './discoverability.js';
import { HostUser } from './harness.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

afterAll(removeCaseTrees);

/** What the user asks where the scripted loop does not run. */
const PROBE = 'Which skills can you use here? (DISCOVERABILITY-PROBE)';

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/gu, '');

for (const hostCase of HOST_CASES) {
  if (hostCase.skip !== undefined) process.stdout.write(`skipping ${hostCase.label}: ${hostCase.skip}\n`);
  describe.skipIf(hostCase.skip !== undefined)(`opencode 1.18.33 on ${hostCase.label}`, () => {
    let tree: string;
    let expected: Published;
    let user: HostUser;
    /** What the user asked in the run the first request is read from. */
    let prompt: string;
    beforeAll(() => {
      tree = hostCase.prepare();
      expected = published(tree);
      user = new HostUser('opencode', [tree, ...hostCase.flags]);
    });
    afterAll(async () => user?.close());

    it('opencode mcp list: connected', () => {
      const run = user.offline(['mcp', 'list']);
      expect(run.status).toBe(0);
      expect(plain(run.stdout)).toMatch(/^● {2}✓ skills connected$/mu);
    });

    it.skipIf(!hostCase.loop)(
      'opencode run, scripted model: skills_read_skill, then skills_read_skill_file; each result reaches the model',
      () => {
        scriptLoop(user, { readSkill: 'skills_read_skill', readSkillFile: 'skills_read_skill_file' });
        const run = user.offline(['run', LOOP_PROMPT]);
        prompt = LOOP_PROMPT;
        expect(run.status).toBe(0);
        // What the user sees: the reply on stdout; on stderr, each call with its arguments.
        expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
        expect(plain(run.stderr)).toContain(
          '⚙ skills_read_skill {"name":"report-writer"}\n⚙ skills_read_skill_file {"skill":"report-writer","path":"references/style-guide.md"}\n',
        );
        const outcome = loopOutcome(user);
        checkServed(outcome, tree);
        const texts = loadedTexts(tree);
        expect(outcome.turns).toHaveLength(3);
        // opencode joins a result's text blocks with a blank line into one tool message.
        expect(outcome.answered(1)?.name).toBe('skills_read_skill');
        expect(outcome.answered(1)?.result).toEqual([outcome.served.skill.join('\n\n')]);
        expect(outcome.answered(1)?.result?.[0]?.endsWith(`\n\n${texts.skill}`)).toBe(true);
        expect(outcome.answered(2)?.name).toBe('skills_read_skill_file');
        expect(outcome.answered(2)?.result).toEqual([texts.file]);
      },
    );

    it.skipIf(hostCase.loop)('opencode run, unscripted: the model answers', () => {
      const run = user.offline(['run', PROBE]);
      prompt = PROBE;
      expect(run.status).toBe(0);
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
    });

    it('the model gets the server instructions in the system prompt and our tools as skills_*', () => {
      const first = firstModelRequest(user, prompt)?.conversation;
      expect(first?.tools).toEqual(
        expect.arrayContaining([
          'skills_list_skills',
          'skills_read_skill',
          'skills_read_skill_file',
          'skills_search_skills',
        ]),
      );
      const messages = (first?.body['messages'] ?? []) as { role: string; content: unknown }[];
      const system = messages.filter((message) => message.role === 'system').map((message) => String(message.content));
      expect(system.join('\n')).toContain(
        `<mcp_instructions>\n  <server name="skills">\n    ${INSTRUCTIONS}\n  </server>\n</mcp_instructions>`,
      );
      // On sample-skills, one catalog line per skill (on larger trees, as many as fit: the last test checks them).
      const tools = (first?.body['tools'] ?? []) as { function: { name: string; description: string } }[];
      const readSkill = tools.find((tool) => tool.function.name === 'skills_read_skill');
      if (hostCase.loop) expect(catalogLines(readSkill?.function.description)).toHaveLength(expected.skills);
      expect(readUris(user)).not.toContain('skill://index.json');
      // opencode run lists only tools: no prompts, no resources.
      expect(user.requests('prompts/list')).toEqual([]);
      expect(user.requests('resources/list')).toEqual([]);
    });

    it('the first request describes each skill the catalog holds once, and says how to find the rest', () => {
      expectDiscoverable(user, {
        host: 'opencode 1.18.33 (opencode run)',
        tree: hostCase.label,
        prompt,
        from: 0,
        skills: expected.entries,
      });
    });
  });
}
