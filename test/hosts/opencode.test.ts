/**
 * opencode 1.18.33 against skills-serve, offline, as a user wires it (`~/.config/opencode/opencode.json`: a custom
 * OpenAI-compatible provider, here the stand-in model over Chat Completions, and the server as a local MCP server):
 * `opencode mcp list`, what `opencode run` gives the model (the server instructions in the system prompt, our tools
 * as `skills_*`, each skill the catalog holds described once), and, on `sample-skills/`, the scripted loop:
 * read_skill, then read_skill_file, each result in the next request.
 */
import { expect, it } from 'vitest';

import { describeHostCases, INSTRUCTIONS } from './cases.js';
import { expectDiscoverable, firstModelRequest } from './discoverability.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

/** What the user asks where the scripted loop does not run. */
const PROBE = 'Which skills can you use here? (DISCOVERABILITY-PROBE)';

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/gu, '');

describeHostCases('opencode 1.18.33', 'opencode', (hostCase, ctx) => {
  /** What the user asked in the run the first request is read from. */
  let prompt: string;

  it('opencode mcp list: connected', () => {
    const run = ctx.user.offline(['mcp', 'list']);
    expect(run.status).toBe(0);
    expect(plain(run.stdout)).toMatch(/^● {2}✓ skills connected$/mu);
  });

  it.skipIf(!hostCase.loop)(
    'opencode run, scripted model: skills_read_skill, then skills_read_skill_file; each result reaches the model',
    () => {
      scriptLoop(ctx.user, { readSkill: 'skills_read_skill', readSkillFile: 'skills_read_skill_file' });
      const run = ctx.user.offline(['run', LOOP_PROMPT]);
      prompt = LOOP_PROMPT;
      expect(run.status).toBe(0);
      // What the user sees: the reply on stdout; on stderr, each call with its arguments.
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
      expect(plain(run.stderr)).toContain(
        '⚙ skills_read_skill {"name":"report-writer"}\n⚙ skills_read_skill_file {"skill":"report-writer","path":"references/style-guide.md"}\n',
      );
      const outcome = loopOutcome(ctx.user);
      checkServed(outcome, ctx.tree);
      const texts = loadedTexts(ctx.tree);
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
    const run = ctx.user.offline(['run', PROBE]);
    prompt = PROBE;
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
  });

  it('the model gets the server instructions in the system prompt and our tools as skills_*', () => {
    const first = firstModelRequest(ctx.user, prompt)?.conversation;
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
    if (hostCase.loop) expect(catalogLines(readSkill?.function.description)).toHaveLength(ctx.expected.skills);
    expect(readUris(ctx.user)).not.toContain('skill://index.json');
    // opencode run lists only tools: no prompts, no resources.
    expect(ctx.user.requests('prompts/list')).toEqual([]);
    expect(ctx.user.requests('resources/list')).toEqual([]);
  });

  it('the first request describes each skill the catalog holds once, and says how to find the rest', () => {
    expectDiscoverable(ctx.user, {
      host: 'opencode 1.18.33 (opencode run)',
      tree: hostCase.label,
      prompt,
      from: 0,
      skills: ctx.expected.entries,
    });
  });
});
