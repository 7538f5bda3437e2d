/**
 * OpenAI Codex CLI 0.171.0 against skills-serve, offline, as a user wires it (`~/.codex/config.toml`: a custom model
 * provider, here the stand-in model over the Responses API, and the server under `[mcp_servers.skills]`): what
 * `codex exec` gives the model (the server instructions as the description of the `mcp__skills` namespace, our four
 * tools inside it), and the scripted loop: read_skill, then read_skill_file, each result in the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOST_CASES, INSTRUCTIONS, removeCaseTrees } from './cases.js';
import { HostUser } from './harness.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

afterAll(removeCaseTrees);

const hostCase = HOST_CASES.find((candidate) => candidate.loop);
if (hostCase === undefined) throw new Error('no host case runs the loop');

describe(`Codex CLI 0.171.0 on ${hostCase.label}`, () => {
  let tree: string;
  let user: HostUser;
  beforeAll(() => {
    tree = hostCase.prepare();
    user = new HostUser('codex', [tree, ...hostCase.flags]);
  });
  afterAll(async () => user?.close());

  it('codex exec, scripted model: mcp__skills.read_skill, then read_skill_file; each result reaches the model', () => {
    scriptLoop(user, { readSkill: 'mcp__skills.read_skill', readSkillFile: 'mcp__skills.read_skill_file' });
    const run = user.offline(['exec', '--skip-git-repo-check', LOOP_PROMPT]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
    // What the user sees of the calls.
    expect(run.stderr).toContain(
      'mcp: skills/read_skill started\nmcp: skills/read_skill (completed)\nmcp: skills/read_skill_file started\nmcp: skills/read_skill_file (completed)\n',
    );
    const outcome = loopOutcome(user);
    checkServed(outcome, tree);
    const texts = loadedTexts(tree);
    expect(outcome.turns).toHaveLength(3);
    // Codex keeps a tool result's content items, after a line of its own.
    const wallTime = /^Wall time: \d+(?:\.\d+)? seconds\nOutput:$/u;
    const [loadTime, ...load] = outcome.answered(1)?.result ?? [];
    expect(outcome.answered(1)?.name).toBe('mcp__skills.read_skill');
    expect(loadTime).toMatch(wallTime);
    expect(load).toEqual(outcome.served.skill);
    expect(load[1]).toBe(texts.skill);
    const [fileTime, ...file] = outcome.answered(2)?.result ?? [];
    expect(outcome.answered(2)?.name).toBe('mcp__skills.read_skill_file');
    expect(fileTime).toMatch(wallTime);
    expect(file).toEqual([texts.file]);
  });

  it('the model gets the server instructions as the mcp__skills namespace description, our four tools inside', () => {
    const [first] = loopOutcome(user).turns;
    const tools = (first?.body['tools'] ?? []) as {
      type: string;
      name: string;
      description?: string;
      tools?: unknown[];
    }[];
    const namespace = tools.find((tool) => tool.type === 'namespace' && tool.name === 'mcp__skills');
    expect(namespace?.description).toBe(INSTRUCTIONS);
    const inner = (namespace?.tools ?? []) as { name: string; description: string }[];
    expect(inner.map((tool) => tool.name)).toEqual(['list_skills', 'read_skill', 'read_skill_file', 'search_skills']);
    // The catalog, the only place the model is shown the skills: one line each.
    expect(catalogLines(inner.find((tool) => tool.name === 'read_skill')?.description)).toHaveLength(6);
    expect(readUris(user)).not.toContain('skill://index.json');
    // Codex lists only tools: no prompts, no resources (the model can list them with list_mcp_resources).
    expect(user.requests('prompts/list')).toEqual([]);
    expect(user.requests('resources/list')).toEqual([]);
    const [initialize] = user.requests('initialize');
    expect((initialize?.['params'] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
  });
});
