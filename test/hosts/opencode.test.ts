/**
 * opencode 1.18.33 against skills-serve, offline, as a user wires it (`~/.config/opencode/opencode.json`: a custom
 * OpenAI-compatible provider, here the stand-in model over Chat Completions, and the server as a local MCP server):
 * `opencode mcp list`, what `opencode run` gives the model (the server instructions in the system prompt, our tools
 * as `skills_*`), and the scripted loop: read_skill, then read_skill_file, each result in the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOST_CASES, INSTRUCTIONS, removeCaseTrees } from './cases.js';
import { HostUser } from './harness.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

afterAll(removeCaseTrees);

const hostCase = HOST_CASES.find((candidate) => candidate.loop);
if (hostCase === undefined) throw new Error('no host case runs the loop');

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/gu, '');

describe(`opencode 1.18.33 on ${hostCase.label}`, () => {
  let tree: string;
  let user: HostUser;
  beforeAll(() => {
    tree = hostCase.prepare();
    user = new HostUser('opencode', [tree, ...hostCase.flags]);
  });
  afterAll(async () => user?.close());

  it('opencode mcp list: connected', () => {
    const run = user.offline(['mcp', 'list']);
    expect(run.status).toBe(0);
    expect(plain(run.stdout)).toMatch(/^● {2}✓ skills connected$/mu);
  });

  it('opencode run, scripted model: skills_read_skill, then skills_read_skill_file; each result reaches the model', () => {
    scriptLoop(user, { readSkill: 'skills_read_skill', readSkillFile: 'skills_read_skill_file' });
    const run = user.offline(['run', LOOP_PROMPT]);
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
  });

  it('the model gets the server instructions in the system prompt and our tools as skills_*', () => {
    const [first] = loopOutcome(user).turns;
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
    const tools = (first?.body['tools'] ?? []) as { function: { name: string; description: string } }[];
    const readSkill = tools.find((tool) => tool.function.name === 'skills_read_skill');
    expect(catalogLines(readSkill?.function.description)).toHaveLength(6);
    expect(readUris(user)).not.toContain('skill://index.json');
    // opencode run lists only tools: no prompts, no resources.
    expect(user.requests('prompts/list')).toEqual([]);
    expect(user.requests('resources/list')).toEqual([]);
  });
});
