/**
 * `skills-serve check --hosts` over the built CLI, on sample-skills/, a generated 400-skill catalog (the one
 * `npm run test:hosts` runs the real hosts on) and a tree with one of each exception: the exact text, the `--json`
 * figures, exit codes with and without `--strict`. The catalog figures are checked against what a server started on
 * the same tree sends in `read_skill`'s description, with and without a `skills/list` page read first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { SAMPLE_PROMPT_NAMES } from '../helpers/sample.js';
import { connect, type Connection, rawRequest, REPO, SAMPLE_SKILLS } from '../helpers/server.js';
import { catalogTree, skillMd, tempTrees, type TreeEntry } from '../helpers/tree.js';

interface JsonRow {
  uri: string;
  model: string;
  channel?: string;
  cap?: { id: string; limit: number };
  prompt?: string;
}
interface JsonView {
  id: string;
  label: string;
  released: boolean;
  skills: number;
  full: number;
  extension?: { listed: number; pagesRead: number; descriptionChars?: number };
  catalog?: { lines: number; chars: number; max: number; hostCut?: number };
  prompts?: number;
  refused?: { uri: string; reason: string };
  rows: JsonRow[];
  collisions: { name: string; uris: string[] }[];
}
interface JsonReport {
  catalogMax: number;
  pageSize: number;
  summary: { served: number; leftOut: number; warnings: number };
  hosts: JsonView[];
}

function json(args: readonly string[]): JsonReport {
  const run = cli(['check', '--hosts', '--json', ...args]);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as JsonReport;
}

function hostOf(report: JsonReport, id: string): JsonView {
  const found = report.hosts.find((host) => host.id === id);
  if (found === undefined) throw new Error(`no host ${id}`);
  return found;
}

const temps = tempTrees();
let connection: Connection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
});
afterAll(() => temps.removeAll());

/** `read_skill`'s description as a server on `root` sends it, after the client read `skills/list` page 1 or not. */
async function readSkillDescription(root: string, listFirstPage: boolean): Promise<string> {
  connection = await connect([root], undefined, { skillsExtension: listFirstPage });
  if (listFirstPage) await rawRequest(connection, 'skills/list', {});
  const { tools } = await connection.client.listTools();
  return tools.find((tool) => tool.name === 'read_skill')?.description ?? '';
}

const SAMPLE_REFUNDS_IN_CATALOG =
  '  name "refunds" shared by 2 skills: acme/billing/refunds (catalog line with skill://acme/billing/refunds/SKILL.md, prompt acme-billing-refunds); acme/support/refunds (catalog line with skill://acme/support/refunds/SKILL.md, prompt acme-support-refunds)';
const SAMPLE_REFUNDS_NO_PROMPTS =
  '  name "refunds" shared by 2 skills: acme/billing/refunds (catalog line with skill://acme/billing/refunds/SKILL.md); acme/support/refunds (catalog line with skill://acme/support/refunds/SKILL.md)';
const SAMPLE_REFUNDS_OWN_LIST =
  '  name "refunds" shared by 2 skills: acme/billing/refunds (in the host\'s own list as refunds); acme/support/refunds (in the host\'s own list as refunds)';

/** What `check --hosts sample-skills` prints (docs/check.md quotes it). */
const SAMPLE_TEXT = `Claude Code 2.1.332: 6 of 6 skills described in full in the first request (read_skill catalog, 2,020 of 4,096 chars); 6 prompts for the user
${SAMPLE_REFUNDS_IN_CATALOG}

Claude Code 2.1.332, extension client on: 6 of 6 skills described in full (own skill list: 6, descriptions up to 1,536 chars); no prompts (the host lists every skill itself)
${SAMPLE_REFUNDS_OWN_LIST}

Gemini CLI 0.61.0: 6 of 6 skills described in full in the first request (read_skill catalog, 2,020 of 4,096 chars); 6 prompts for the user
${SAMPLE_REFUNDS_IN_CATALOG}

Codex CLI 0.171.0: 6 of 6 skills described in full in the first request (read_skill catalog, 2,020 of 4,096 chars); no prompts (the host lists none)
${SAMPLE_REFUNDS_NO_PROMPTS}

opencode 1.18.33: 6 of 6 skills described in full in the first request (read_skill catalog, 2,020 of 4,096 chars); no prompts (the host lists none)
${SAMPLE_REFUNDS_NO_PROMPTS}

Microsoft Agent Framework (.NET): 6 of 6 skills described in full (own skill list: 6); no prompts (the host lists none)
${SAMPLE_REFUNDS_OWN_LIST}

goose (Skills-extension fork): 6 of 6 skills described in full (own skill list: 6); no prompts (the host lists every skill itself)
${SAMPLE_REFUNDS_OWN_LIST}

Gemini CLI (Skills-extension fork): 6 of 6 skills described in full (own skill list: 6, descriptions up to 500 chars); no prompts (the host lists every skill itself)
${SAMPLE_REFUNDS_OWN_LIST}

6 skills served, 0 left out, 0 warnings
`;

describe('check --hosts on sample-skills', () => {
  it('prints one block per host: a summary line, then the one exception, the shared name "refunds"; exit 0', () => {
    expect(cli(['check', '--hosts', 'sample-skills'])).toEqual({ status: 0, stdout: SAMPLE_TEXT, stderr: '' });
    expect(cli(['check', 'sample-skills'], undefined, { SKILLS_SERVE_HOSTS: '1' }).stdout).toBe(SAMPLE_TEXT);
    expect(cli(['check', '--hosts', '--strict', 'sample-skills']).status).toBe(0);
  });

  it('is what docs/check.md quotes', () => {
    expect(readFileSync(path.join(REPO, 'docs', 'check.md'), 'utf8')).toContain(`\n\`\`\`\n${SAMPLE_TEXT}\`\`\`\n`);
  });

  it("--json: every skill of every host; the catalog is read_skill's description as a server sends it", async () => {
    const report = json(['sample-skills']);
    expect(report).toMatchObject({ catalogMax: 4096, pageSize: 100, summary: { served: 6, leftOut: 0, warnings: 0 } });
    expect(report.hosts.map((host) => [host.id, host.full, host.prompts])).toEqual([
      ['claude-code', 6, 6],
      ['claude-code+extension', 6, 0],
      ['gemini-cli', 6, 6],
      ['codex', 6, undefined],
      ['opencode', 6, undefined],
      ['agent-framework', 6, undefined],
      ['goose-fork', 6, 0],
      ['gemini-fork', 6, 0],
    ]);
    const claude = hostOf(report, 'claude-code');
    expect(claude.catalog).toEqual({ lines: 6, chars: 2020, max: 4096 });
    expect(claude.rows.map((row) => row.prompt)).toEqual(SAMPLE_PROMPT_NAMES);
    expect(claude.collisions).toEqual([
      { name: 'refunds', uris: ['skill://acme/billing/refunds/SKILL.md', 'skill://acme/support/refunds/SKILL.md'] },
    ]);
    expect((await readSkillDescription(SAMPLE_SKILLS, false)).length).toBe(2020);
    await connection?.close();
    const listed = await readSkillDescription(SAMPLE_SKILLS, true);
    expect(listed.length).toBe(hostOf(report, 'claude-code+extension').catalog?.chars);
  });
});

const CATALOG_PAST =
  "  past read_skill's catalog budget (--catalog-max 4,096): 364 skills: docker-helper-365, docker-helper-375, docker-helper-385, docker-helper-395, graphql-helper-004 and 359 more; search_skills and list_skills reach them";

const GENERATED_TEXT = `Claude Code 2.1.332: 36 of 400 skills described in full in the first request (read_skill catalog, 3,999 of 4,096 chars); 400 prompts for the user
${CATALOG_PAST}

Claude Code 2.1.332, extension client on: 133 of 400 skills described in full (own skill list: 100, descriptions up to 1,536 chars; read_skill catalog: 33, 4,085 of 4,096 chars); 300 prompts for the user
  past read_skill's catalog budget (--catalog-max 4,096): 267 skills: postgres-helper-133, postgres-helper-143, postgres-helper-153, postgres-helper-163, postgres-helper-173 and 262 more; search_skills and list_skills reach them

Gemini CLI 0.61.0: 36 of 400 skills described in full in the first request (read_skill catalog, 3,999 of 4,096 chars); 400 prompts for the user
${CATALOG_PAST}

Codex CLI 0.171.0: 36 of 400 skills described in full in the first request (read_skill catalog, 3,999 of 4,096 chars); no prompts (the host lists none)
${CATALOG_PAST}

opencode 1.18.33: 36 of 400 skills described in full in the first request (read_skill catalog, 3,999 of 4,096 chars); no prompts (the host lists none)
${CATALOG_PAST}

Microsoft Agent Framework (.NET): 100 of 400 skills described in full (own skill list: 100); no prompts (the host lists none)
  past the first skills/list page, the only one the host reads: 300 skills: kubernetes-helper-201, kubernetes-helper-211, kubernetes-helper-221, kubernetes-helper-231, kubernetes-helper-241 and 295 more; its model cannot reach them

goose (Skills-extension fork): 400 of 400 skills described in full (own skill list: 400); no prompts (the host lists every skill itself)

Gemini CLI (Skills-extension fork): 400 of 400 skills described in full (own skill list: 400, descriptions up to 500 chars); no prompts (the host lists every skill itself)

400 skills served, 0 left out, 0 warnings
`;

describe('check --hosts on a generated 400-skill catalog', () => {
  let root: string;
  beforeAll(async () => {
    root = await temps.tree(catalogTree(400));
  });

  it('prints what each host shows: 36 catalog lines, 100 + 33 with the extension client, page 1 for Agent Framework', () => {
    expect(cli(['check', '--hosts', root])).toEqual({ status: 0, stdout: GENERATED_TEXT, stderr: '' });
    // --strict: released hosts leave skills past the catalog budget.
    expect(cli(['check', '--hosts', '--strict', root]).status).toBe(1);
  });

  it("--json: the catalog figures are read_skill's description as the server sends it", async () => {
    const report = json([root]);
    const claude = hostOf(report, 'claude-code');
    expect(claude).toMatchObject({ full: 36, catalog: { lines: 36, chars: 3999, max: 4096 }, prompts: 400 });
    const claudeListing = hostOf(report, 'claude-code+extension');
    expect(claudeListing).toMatchObject({
      full: 133,
      extension: { listed: 100, pagesRead: 1, descriptionChars: 1536 },
      catalog: { lines: 33, chars: 4085, max: 4096 },
      prompts: 300,
    });
    expect(claudeListing.rows.slice(99, 101).map((row) => row.channel)).toEqual(['extension', 'catalog']);
    const framework = hostOf(report, 'agent-framework');
    expect(framework.rows[100]).toMatchObject({ model: 'past-cap', cap: { id: 'extension-pages', limit: 1 } });

    const description = await readSkillDescription(root, false);
    expect(description.length).toBe(3999);
    expect(description).toContain(' 364 more: find them with search_skills or list_skills.');
    expect(description.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(36);
    await connection?.close();
    const afterPage = await readSkillDescription(root, true);
    expect(afterPage.length).toBe(4085);
    expect(afterPage.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(33);
  });

  it('--page-size 30: pages of 30, 30, 30 and 10 entries, so Claude Code keeps all it reads; the server agrees', async () => {
    const run = cli(['check', '--hosts', '--page-size', '30', root]);
    expect(run.status).toBe(0);
    const blocks = run.stdout.split('\n\n');
    expect(blocks[1]).toBe(GENERATED_TEXT.split('\n\n')[1]);
    expect(blocks[5]?.split('\n')[0]).toBe(
      'Microsoft Agent Framework (.NET): 30 of 400 skills described in full (own skill list: 30); no prompts (the host lists none)',
    );
    // No page crosses the 100th entry: the host reads four pages and holds what it read; its catalog names the rest.
    connection = await connect([root, '--page-size', '30'], undefined, { skillsExtension: true });
    let cursor: unknown;
    const sizes: number[] = [];
    for (let page = 0; page < 4; page++) {
      const result = await rawRequest(connection, 'skills/list', cursor === undefined ? {} : { cursor });
      sizes.push((result['skills'] as unknown[]).length);
      cursor = result['nextCursor'];
    }
    expect(sizes).toEqual([30, 30, 30, 10]);
    const { tools } = await connection.client.listTools();
    const description = tools.find((tool) => tool.name === 'read_skill')?.description ?? '';
    expect(description).toContain("The other 100 skills are in your host's own skill list");
    expect(description.length).toBe(4085);
  });

  it('--catalog-max 8000: Claude Code shows 4,096 characters of it, cutting one line and hiding 36 more', () => {
    const run = cli(['check', '--hosts', '--catalog-max', '8000', root]);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n\n')[0]).toBe(
      [
        'Claude Code 2.1.332: 36 of 400 skills described in full in the first request (read_skill catalog, 7,972 of 8,000 chars, the host shows 4,096); 400 prompts for the user',
        "  cut where the host stops showing read_skill's description (4,096 chars): 1 skill: docker-helper-365 (75 of 83 chars)",
        "  past the 4,096 chars of read_skill's description the host shows: 36 skills: docker-helper-375, docker-helper-385, docker-helper-395, graphql-helper-004, graphql-helper-014 and 31 more; search_skills and list_skills reach them",
        "  past read_skill's catalog budget (--catalog-max 8,000): 327 skills: graphql-helper-334, graphql-helper-344, graphql-helper-354, graphql-helper-364, graphql-helper-374 and 322 more; search_skills and list_skills reach them",
      ].join('\n'),
    );
    expect(run.stdout.split('\n\n')[2]?.split('\n')[0]).toBe(
      'Gemini CLI 0.61.0: 73 of 400 skills described in full in the first request (read_skill catalog, 7,972 of 8,000 chars); 400 prompts for the user',
    );
  });
});

describe('check --hosts says why, as check does', () => {
  it('names the skill left out and each warning, with its fix, after the hosts; --json lists them too', async () => {
    const root = await temps.tree({
      'fine/SKILL.md': skillMd('fine', 'Does fine things.'),
      'blank/SKILL.md': skillMd('blank', '"   "'),
      'keys/SKILL.md': skillMd('keys', 'Holds an env file.'),
      'keys/prod.env': 'X=1\n',
    });
    const run = cli(['check', '--hosts', root]);
    expect(run.status).toBe(1);
    const check = cli(['check', root]);
    // The same two lines a diagnostic gets from check, in the same order.
    const diagnostics = check.stdout.split('\n\n')[1] ?? '';
    expect(diagnostics.split('\n')).toHaveLength(4);
    expect(diagnostics).toContain('blank/SKILL.md:3:1: frontmatter description must not be blank [description-blank]');
    const blocks = run.stdout.trimEnd().split('\n\n');
    expect(blocks.slice(-2)).toEqual([diagnostics, '2 skills served, 1 left out, 1 warning']);
    const rules = (args: string[]): string[] =>
      (JSON.parse(cli(args).stdout) as { diagnostics: { rule: string }[] }).diagnostics.map((d) => d.rule).sort();
    expect(rules(['check', '--hosts', '--json', root])).toEqual(rules(['check', '--json', root]));
    expect(rules(['check', '--json', root])).toEqual(['description-blank', 'secret-file']);
  });
});

describe('check --hosts on a tree with one of each exception', () => {
  const body = `${'A line of instructions that goes on for a while. '.repeat(260)}\n`;
  const exceptions: Record<string, TreeEntry> = {
    'alpha/SKILL.md': skillMd('alpha', 'Does alpha things. Use for alpha.'),
    'big/SKILL.md': `${skillMd('big', 'A skill with a long SKILL.md.')}${body}`,
    'deploy/SKILL.md': skillMd('deploy', 'Deploys to production.', 'disable-model-invocation: true'),
    'helper/SKILL.md': skillMd('helper', 'Internal helper for other skills.', 'user-invocable: false'),
    'long-desc/SKILL.md': skillMd('long-desc', 'Long description words. '.repeat(30).trim()),
    'acme/x/dup/SKILL.md': skillMd('dup', 'Dup in x.'),
    'acme/y/dup/SKILL.md': skillMd('dup', 'Dup in y.'),
  };

  it('lists each exception under the hosts it concerns; --strict passes (only a prototype cuts)', async () => {
    const root = await temps.tree(exceptions);
    const run = cli(['check', '--hosts', root]);
    expect(run).toEqual({ status: 0, stdout: EXCEPTIONS_TEXT, stderr: '' });
    expect(cli(['check', '--hosts', '--strict', root]).status).toBe(0);
  });

  it('an entry Agent Framework finds invalid: it refuses the server, and --strict fails', async () => {
    // 520 characters, 1,040 UTF-16 code units: within the Agent Skills limit, over the one .NET counts in. (A blank
    // description, the other such case, is refused by the index itself: description-blank.)
    const root = await temps.tree({ ...exceptions, 'blank/SKILL.md': skillMd('blank', '🧑'.repeat(520)) });
    const run = cli(['check', '--hosts', root]);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n\n')[5]).toBe(
      [
        'Microsoft Agent Framework (.NET): 0 of 8 skills: it refuses the server (one entry it finds invalid fails its whole discovery); no prompts (the host lists none)',
        '  refused entry: skill://blank/SKILL.md: Skill description must be 1024 characters or fewer.',
        '  name "dup" shared by 2 skills: acme/x/dup (not shown); acme/y/dup (not shown)',
      ].join('\n'),
    );
    expect(cli(['check', '--hosts', '--strict', root]).status).toBe(1);
  });
});

it('--hosts and --verify-cache do not go together (exit 2)', () => {
  expect(cli(['check', '--hosts', '--verify-cache', 'sample-skills'])).toEqual({
    status: 2,
    stdout: '',
    stderr: 'skills-serve: --hosts and --verify-cache do not go together\n',
  });
});

const DUP_IN_CATALOG =
  '  name "dup" shared by 2 skills: acme/x/dup (catalog line with skill://acme/x/dup/SKILL.md, prompt acme-x-dup); acme/y/dup (catalog line with skill://acme/y/dup/SKILL.md, prompt acme-y-dup)';
const DUP_NO_PROMPTS =
  '  name "dup" shared by 2 skills: acme/x/dup (catalog line with skill://acme/x/dup/SKILL.md); acme/y/dup (catalog line with skill://acme/y/dup/SKILL.md)';
const DUP_OWN_LIST =
  '  name "dup" shared by 2 skills: acme/x/dup (in the host\'s own list as dup); acme/y/dup (in the host\'s own list as dup)';
const DEPLOY_NO_PROMPTS =
  '  not shown to the model (disable-model-invocation: true): 1 skill: deploy; the host lists no prompts, so its user cannot run it either';

/**
 * The catalog is 1,126 characters: 146 + 2 + 27 for the summary and heading, then six lines (deploy has none):
 * `- dup (skill://acme/x/dup/SKILL.md): Dup in x.` and its twin (46 each), alpha (42), big (36), helper (43) and
 * long-desc (13 + 719), with 6 newlines. big's SKILL.md is 12,822 characters, over Codex's 12,000.
 */
const EXCEPTIONS_TEXT = `Claude Code 2.1.332: 6 of 7 skills described in full in the first request (read_skill catalog, 1,126 of 4,096 chars); 6 prompts for the user
  not shown to the model (disable-model-invocation: true): 1 skill: deploy (prompt deploy)
  no prompt (user-invocable: false): 1 skill: helper
${DUP_IN_CATALOG}

Claude Code 2.1.332, extension client on: 7 of 7 skills described in full (own skill list: 7, descriptions up to 1,536 chars); no prompts (the host lists every skill itself)
${DUP_OWN_LIST}

Gemini CLI 0.61.0: 6 of 7 skills described in full in the first request (read_skill catalog, 1,126 of 4,096 chars); 6 prompts for the user
  not shown to the model (disable-model-invocation: true): 1 skill: deploy (prompt deploy)
  no prompt (user-invocable: false): 1 skill: helper
${DUP_IN_CATALOG}

Codex CLI 0.171.0: 6 of 7 skills described in full in the first request (read_skill catalog, 1,126 of 4,096 chars); no prompts (the host lists none)
${DEPLOY_NO_PROMPTS}
  read_skill's result longer than the 12,000 chars the host passes whole (read_skill says how to read the rest): 1 skill: big (SKILL.md 12,822 chars)
${DUP_NO_PROMPTS}

opencode 1.18.33: 6 of 7 skills described in full in the first request (read_skill catalog, 1,126 of 4,096 chars); no prompts (the host lists none)
${DEPLOY_NO_PROMPTS}
${DUP_NO_PROMPTS}

Microsoft Agent Framework (.NET): 7 of 7 skills described in full (own skill list: 7); no prompts (the host lists none)
${DUP_OWN_LIST}

goose (Skills-extension fork): 7 of 7 skills described in full (own skill list: 7); no prompts (the host lists every skill itself)
${DUP_OWN_LIST}

Gemini CLI (Skills-extension fork): 6 of 7 skills described in full (own skill list: 7, descriptions up to 500 chars); no prompts (the host lists every skill itself)
  cut at 500 chars in the host's own skill list: 1 skill: long-desc (500 of 719 chars)
${DUP_OWN_LIST}

7 skills served, 0 left out, 0 warnings
`;
