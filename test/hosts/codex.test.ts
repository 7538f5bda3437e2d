/**
 * OpenAI Codex CLI 0.171.0 against skills-serve, offline, as a user wires it (`~/.codex/config.toml`: a custom model
 * provider, here the stand-in model over the Responses API, and the server under `[mcp_servers.skills]`): what
 * `codex exec` gives the model (the server instructions as the description of the `mcp__skills` namespace, our four
 * tools inside it, each skill the catalog holds described once), and, on `sample-skills/`, the scripted loop:
 * read_skill, then read_skill_file, each result in the next request.
 */
import { expect, it } from 'vitest';

import { describeHostCases, INSTRUCTIONS } from './cases.js';
import { expectDiscoverable, firstModelRequest } from './discoverability.js';
import { catalogLines, checkServed, loadedTexts, LOOP_PROMPT, loopOutcome, readUris, scriptLoop } from './loop.js';

/** What the user asks where the scripted loop does not run. */
const PROBE = 'Which skills can you use here? (DISCOVERABILITY-PROBE)';

describeHostCases('Codex CLI 0.171.0', 'codex', (hostCase, ctx) => {
  /** What the user asked in the run the first request is read from. */
  let prompt: string;

  it.skipIf(!hostCase.loop)(
    'codex exec, scripted model: mcp__skills.read_skill, then read_skill_file; each result reaches the model',
    () => {
      scriptLoop(ctx.user, { readSkill: 'mcp__skills.read_skill', readSkillFile: 'mcp__skills.read_skill_file' });
      const run = ctx.user.offline(['exec', '--skip-git-repo-check', LOOP_PROMPT]);
      prompt = LOOP_PROMPT;
      expect(run.status).toBe(0);
      expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
      // What the user sees of the calls.
      expect(run.stderr).toContain(
        'mcp: skills/read_skill started\nmcp: skills/read_skill (completed)\nmcp: skills/read_skill_file started\nmcp: skills/read_skill_file (completed)\n',
      );
      const outcome = loopOutcome(ctx.user);
      checkServed(outcome, ctx.tree);
      const texts = loadedTexts(ctx.tree);
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
    },
  );

  it.skipIf(hostCase.loop)('codex exec, unscripted: the model answers', () => {
    const run = ctx.user.offline(['exec', '--skip-git-repo-check', PROBE]);
    prompt = PROBE;
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
  });

  it('the model gets the server instructions as the mcp__skills namespace description, our four tools inside', () => {
    const tools = (firstModelRequest(ctx.user, prompt)?.conversation.body['tools'] ?? []) as {
      type: string;
      name: string;
      description?: string;
      tools?: unknown[];
    }[];
    const namespace = tools.find((tool) => tool.type === 'namespace' && tool.name === 'mcp__skills');
    expect(namespace?.description).toBe(INSTRUCTIONS);
    const inner = (namespace?.tools ?? []) as { name: string; description: string }[];
    expect(inner.map((tool) => tool.name)).toEqual(['list_skills', 'read_skill', 'read_skill_file', 'search_skills']);
    // The catalog, the only place the model is shown the skills: on sample-skills, one line each (on larger trees,
    // as many as fit: the last test checks them).
    const lines = catalogLines(inner.find((tool) => tool.name === 'read_skill')?.description);
    if (hostCase.loop) expect(lines).toHaveLength(ctx.expected.skills);
    expect(readUris(ctx.user)).not.toContain('skill://index.json');
    // Codex lists only tools: no prompts, no resources (the model can list them with list_mcp_resources).
    expect(ctx.user.requests('prompts/list')).toEqual([]);
    expect(ctx.user.requests('resources/list')).toEqual([]);
    const [initialize] = ctx.user.requests('initialize');
    expect((initialize?.['params'] as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
  });

  it('the first request describes each skill the catalog holds once, and says how to find the rest', () => {
    expectDiscoverable(ctx.user, {
      host: 'Codex CLI 0.171.0 (codex exec)',
      tree: hostCase.label,
      prompt,
      from: 0,
      skills: ctx.expected.entries,
    });
  });
});
