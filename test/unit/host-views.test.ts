/**
 * What each host shows of a catalog (`src/hosts/views.ts`, behind `check --hosts`), on made-up skills whose catalog
 * lines have known lengths, with exact figures worked out here by hand; and the pins that keep it the server's own
 * arithmetic: the `skills/list` page bounds and the entries the server takes hosts to decline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hostSkills } from '../../src/commands/check-hosts.js';
import { catalogLine } from '../../src/hosts/catalog.js';
import {
  AGENT_FRAMEWORK,
  CLAUDE_CODE,
  EXTENSION_MAX_ENTRY_BYTES,
  EXTENSION_MAX_SKILLS,
  GEMINI_FORK,
  HOST_PROFILES,
} from '../../src/hosts/profiles.js';
import {
  agentFrameworkRefusal,
  extensionDecline,
  type HostSkill,
  type HostView,
  hostViews,
  strictFailures,
} from '../../src/hosts/views.js';
import { buildSnapshot } from '../../src/index/build.js';
import { declinedByHosts } from '../../src/server/compat/offer.js';
import { SKILLS_PAGE_MAX, SKILLS_PAGE_MAX_BYTES } from '../../src/server/skills-handlers.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';

/** A skill with what the views read; its catalog line is `- <name>: <description>`. */
function skill(skillPath: string, fields: Partial<HostSkill> = {}): HostSkill {
  const segments = skillPath.split('/');
  const name = segments.at(-1) as string;
  const uri = `skill://${skillPath}/SKILL.md`;
  return {
    uri,
    segments,
    name,
    description: `Does ${name}.`,
    modelInvocable: true,
    userInvocable: true,
    entryBytes: 300,
    manifestBytes: 200,
    longestUriBytes: uri.length,
    ...fields,
  };
}

/** `count` skills `skill-000`… whose catalog lines are exactly 100 characters (`- skill-000: ` is 13). */
function hundredCharLines(count: number): HostSkill[] {
  return Array.from({ length: count }, (_, index) => {
    const name = `skill-${String(index).padStart(3, '0')}`;
    return skill(name, { description: `Handles case ${String(index).padStart(3, '0')}.`.padEnd(87, '.') });
  });
}

/** `skills/list` pages of 100 entries, as the server answers them. */
function pagesOf(count: number, size = 100): number[] {
  return Array.from({ length: Math.ceil(count / size) }, (_, index) => Math.min(size, count - index * size));
}

function views(skills: readonly HostSkill[], catalogMax = 4096, pages = pagesOf(skills.length)): Map<string, HostView> {
  return new Map(hostViews(skills, { catalogMax, pages }).map((view) => [view.id, view]));
}

function view(all: Map<string, HostView>, id: string): HostView {
  const found = all.get(id);
  if (found === undefined) throw new Error(`no view ${id}`);
  return found;
}

describe('hostViews', () => {
  const many = hundredCharLines(300);

  it('shows every host profile, and Claude Code both as it ships and with its extension client on', () => {
    expect(many.every((one) => catalogLine(one, false).length === 100)).toBe(true);
    expect(hostViews(many, { catalogMax: 4096, pages: pagesOf(300) }).map((one) => [one.id, one.released])).toEqual([
      ['claude-code', true],
      ['claude-code+extension', false],
      ['gemini-cli', true],
      ['codex', true],
      ['opencode', true],
      ['agent-framework', true],
      ['goose-fork', false],
      ['gemini-fork', false],
    ]);
  });

  it('a host without the extension: as many whole catalog lines as fit in --catalog-max, the rest past it', () => {
    const claude = view(views(many), 'claude-code');
    // Summary (146) + ' 262 more: …' (55) + 2 + heading (27) = 230, and 101 a line: 38 lines, 4,068 characters.
    expect(claude).toMatchObject({ skills: 300, full: 38, catalog: { lines: 38, chars: 4068, max: 4096 } });
    expect(claude.extension).toBeUndefined();
    expect(claude.prompts).toBe(300);
    expect(claude.rows[37]).toEqual({
      uri: 'skill://skill-037/SKILL.md',
      name: 'skill-037',
      model: 'full',
      channel: 'catalog',
      descriptionChars: 87,
      line: catalogLine(many[37] as HostSkill, false),
      prompt: 'skill-037',
    });
    expect(claude.rows[38]).toEqual({
      uri: 'skill://skill-038/SKILL.md',
      name: 'skill-038',
      model: 'past-cap',
      descriptionChars: 87,
      cap: { id: 'catalog-max', limit: 4096 },
      reachable: true,
      prompt: 'skill-038',
    });
    expect(claude.rows.filter((row) => row.model === 'past-cap')).toHaveLength(262);
    // Codex shows the same catalog and lists no prompts.
    const codex = view(views(many), 'codex');
    expect(codex).toMatchObject({ full: 38, catalog: { lines: 38, chars: 4068 } });
    expect(codex.prompts).toBeUndefined();
    expect(codex.rows.every((row) => row.noPrompt === 'host-lists-none')).toBe(true);
  });

  it("a catalog past the host's own cut of a tool description: the line it cuts, and the lines it hides", () => {
    const claude = view(views(many, 8000), 'claude-code');
    // 230 + 76 lines of 101 = 7,906 ≤ 8,000. Claude Code shows 4,096: line k ends at 231 + 101k + 100.
    expect(claude.catalog).toEqual({ lines: 76, chars: 7906, max: 8000, hostCut: 4096 });
    expect(claude.full).toBe(38);
    // Line 38 starts at 4,069; its description at 4,082: 14 of its 87 characters are shown.
    expect(claude.rows[38]).toMatchObject({
      model: 'cut',
      shownChars: 14,
      descriptionChars: 87,
      cap: { id: 'tool-description', limit: 4096 },
    });
    expect(claude.rows.filter((row) => row.cap?.id === 'tool-description' && row.model === 'past-cap')).toHaveLength(
      37,
    );
    expect(claude.rows.filter((row) => row.cap?.id === 'catalog-max')).toHaveLength(224);
    // Gemini CLI shows a tool description whole.
    expect(view(views(many, 8000), 'gemini-cli')).toMatchObject({ full: 76, catalog: { lines: 76, chars: 7906 } });
  });

  it("Claude Code's extension client on: the first 100 skills in its own list, the catalog and prompts the rest", () => {
    const claude = view(views(many), 'claude-code+extension');
    // 146 + ' 163 more: …' (55) + ' The other 100 skills are in …' (83) + 2 + 27 = 313, then 37 lines: 4,050.
    expect(claude).toMatchObject({
      full: 137,
      extension: { listed: 100, pagesRead: 1, descriptionChars: 1536 },
      catalog: { lines: 37, chars: 4050, max: 4096 },
      prompts: 200,
    });
    expect(claude.rows[99]).toEqual({
      uri: 'skill://skill-099/SKILL.md',
      name: 'skill-099',
      model: 'full',
      channel: 'extension',
      descriptionChars: 87,
      noPrompt: 'own-list',
    });
    expect(claude.rows[100]).toMatchObject({ model: 'full', channel: 'catalog', prompt: 'skill-100' });
    expect(claude.rows[137]).toMatchObject({ model: 'past-cap', cap: { id: 'catalog-max', limit: 4096 } });
  });

  it('Agent Framework reads page 1 only; goose reads up to 64 pages; the Gemini fork every page', () => {
    const all = views(many);
    const framework = view(all, 'agent-framework');
    expect(framework).toMatchObject({ full: 100, extension: { listed: 100, pagesRead: 1 } });
    expect(framework.catalog).toBeUndefined();
    expect(framework.prompts).toBeUndefined();
    expect(framework.rows[100]).toMatchObject({
      model: 'past-cap',
      cap: { id: 'extension-pages', limit: 1 },
      reachable: false,
    });
    expect(view(all, 'goose-fork')).toMatchObject({ full: 300, extension: { listed: 300, pagesRead: 3 }, prompts: 0 });
    expect(view(all, 'gemini-fork')).toMatchObject({ full: 300, extension: { listed: 300, pagesRead: 3 } });
    // 6,500 skills in pages of 100: goose stops after 64 pages, and the catalog has the other 100.
    const goose = view(
      views(hundredCharLines(6500).map((one, index) => ({ ...one, name: `s${index}` }))),
      'goose-fork',
    );
    expect(goose.extension).toEqual({ listed: 6400, pagesRead: 64 });
    expect(goose.rows[6400]).toMatchObject({ channel: 'catalog', model: 'full' });
  });

  it('cuts a description at what an extension client shows (UTF-16 code units)', () => {
    const skills = [
      skill('long', { description: 'x'.repeat(700) }),
      skill('astral', { description: '😀'.repeat(1000) }),
      skill('short'),
    ];
    const all = views(skills);
    expect(view(all, 'gemini-fork').rows.map((row) => [row.model, row.shownChars, row.descriptionChars])).toEqual([
      ['cut', 500, 700],
      ['cut', 500, 2000],
      ['full', undefined, 11],
    ]);
    expect(view(all, 'gemini-fork').rows[0]?.cap).toEqual({ id: 'extension-description', limit: 500 });
    expect(view(all, 'claude-code+extension').rows.map((row) => [row.model, row.shownChars])).toEqual([
      ['full', undefined],
      ['cut', 1536],
      ['full', undefined],
    ]);
  });

  it('honours disable-model-invocation (no catalog line, still a prompt) and user-invocable: false (no prompt)', () => {
    const skills = [
      skill('deploy', { modelInvocable: false }),
      skill('helper', { userInvocable: false }),
      skill('plain'),
    ];
    const all = views(skills);
    const claude = view(all, 'claude-code');
    expect(claude).toMatchObject({ full: 2, catalog: { lines: 2 }, prompts: 2 });
    expect(claude.rows.map((row) => [row.model, row.prompt, row.noPrompt])).toEqual([
      ['user-only', 'deploy', undefined],
      ['full', undefined, 'user-invocable'],
      ['full', 'plain', undefined],
    ]);
    expect(view(all, 'codex').rows[0]).toMatchObject({ model: 'user-only', noPrompt: 'host-lists-none' });
    // Nothing the author chose counts against --strict.
    expect(strictFailures(claude)).toEqual([]);
  });

  it('shows names several skills share: catalog lines with the URI, prompts named by skill path', () => {
    const skills = [skill('acme/billing/refunds'), skill('acme/support/refunds'), skill('refunds')];
    const all = views(skills);
    const claude = view(all, 'claude-code');
    expect(claude.collisions).toEqual([
      {
        name: 'refunds',
        uris: [
          'skill://acme/billing/refunds/SKILL.md',
          'skill://acme/support/refunds/SKILL.md',
          'skill://refunds/SKILL.md',
        ],
      },
    ]);
    expect(claude.rows.map((row) => [row.line, row.prompt])).toEqual([
      ['- refunds (skill://acme/billing/refunds/SKILL.md): Does refunds.', 'acme-billing-refunds'],
      ['- refunds (skill://acme/support/refunds/SKILL.md): Does refunds.', 'acme-support-refunds'],
      ['- refunds (skill://refunds/SKILL.md): Does refunds.', 'refunds'],
    ]);
    expect(view(all, 'gemini-fork').rows.map((row) => row.channel)).toEqual(['extension', 'extension', 'extension']);
  });

  it('says where read_skill’s result is longer than a host passes whole', () => {
    const skills = [skill('big', { manifestBytes: 60_000, manifestChars: 20_000 }), skill('small')];
    const all = views(skills);
    expect(view(all, 'codex').rows[0]?.result).toEqual({ manifestChars: 20_000, keptChars: 12_000 });
    expect(view(all, 'opencode').rows[0]?.result).toBeUndefined();
    expect(view(all, 'claude-code').rows[0]?.result).toBeUndefined();
    expect(view(all, 'gemini-cli').rows[0]?.result).toBeUndefined();
    expect(view(all, 'codex').rows[1]?.result).toBeUndefined();
  });

  it('an entry Claude Code declines stays in the catalog; one it drops past its byte cap is out of both', () => {
    const declined = [
      skill('alpha'),
      skill('huge', { manifestBytes: 1_000_001 }),
      skill('omega', { longestUriBytes: 2049 }),
    ];
    const claude = view(views(declined), 'claude-code+extension');
    expect(claude).toMatchObject({ full: 3, extension: { listed: 1 }, catalog: { lines: 2 } });
    expect(claude.rows.map((row) => [row.channel, row.declined])).toEqual([
      ['extension', undefined],
      ['catalog', { id: 'manifest-bytes', bytes: 1_000_001, limit: 1_000_000 }],
      ['catalog', { id: 'uri-bytes', bytes: 2049, limit: 2048 }],
    ]);
    // 87 entries of 6,000 bytes (522,000) fill page 1; page 2's would pass 524,288: the host drops them, while the
    // server, which answered them, leaves them out of the catalog.
    const heavy = hundredCharLines(100).map((one) => ({ ...one, entryBytes: 6000 }));
    const dropped = view(views(heavy, 4096, [87, 13]), 'claude-code+extension');
    expect(dropped).toMatchObject({ full: 87, extension: { listed: 87, pagesRead: 2 }, catalog: { lines: 0 } });
    expect(dropped.rows[87]).toMatchObject({
      model: 'past-cap',
      cap: { id: 'extension-bytes', limit: 524_288 },
      reachable: true,
      noPrompt: 'own-list',
    });
  });

  it('Agent Framework refuses the server for one invalid entry on the page it reads', () => {
    const skills = [skill('alpha'), skill('blank', { description: ' ' }), skill('omega')];
    const framework = view(views(skills), 'agent-framework');
    expect(framework).toMatchObject({
      full: 0,
      extension: { listed: 0 },
      refused: { uri: 'skill://blank/SKILL.md', reason: 'Skill description is required.' },
    });
    expect(framework.rows.every((row) => row.model === 'refused')).toBe(true);
    expect(strictFailures(framework)).toHaveLength(3);
    // On page 2, which it never reads, the same entry refuses nothing.
    const later = [...hundredCharLines(100), skill('zz-blank', { description: ' ' })];
    expect(view(views(later), 'agent-framework')).toMatchObject({ full: 100, extension: { listed: 100 } });
  });

  it('Gemini CLI lists the prompts of one prompts/list page (10,000); Claude Code follows the cursor', () => {
    const skills = Array.from({ length: 10_001 }, (_, index) => skill(`s${index}`));
    const all = views(skills);
    expect(view(all, 'gemini-cli').prompts).toBe(10_000);
    expect(view(all, 'gemini-cli').rows[10_000]?.noPrompt).toBe('prompts-page');
    expect(view(all, 'claude-code').prompts).toBe(10_001);
  });

  it('counts for --strict only the released hosts as they ship', () => {
    const skills = [skill('long', { description: 'x'.repeat(700) })];
    const all = views(skills);
    expect(strictFailures(view(all, 'gemini-fork'))).toHaveLength(0);
    expect(view(all, 'gemini-fork').rows[0]?.model).toBe('cut');
    expect([...all.values()].flatMap((one) => strictFailures(one))).toEqual([]);
    const past = views(many);
    expect(strictFailures(view(past, 'claude-code'))).toHaveLength(262);
    expect(strictFailures(view(past, 'claude-code+extension'))).toHaveLength(0);
  });
});

describe('agentFrameworkRefusal', () => {
  it.each([
    ['a valid entry', {}, undefined],
    ['an upper-case name', { name: 'Bad_Name', uri: 'skill://Bad_Name/SKILL.md' }, 'Skill name must use only'],
    ['a double hyphen', { name: 'a--b', uri: 'skill://a--b/SKILL.md' }, 'Skill name must use only'],
    [
      'a 65-character name',
      { name: 'x'.repeat(65), uri: `skill://${'x'.repeat(65)}/SKILL.md` },
      'Skill name must be 64',
    ],
    ['a blank description', { description: '\u3000' }, 'Skill description is required.'],
    ['a 1,025-character description', { description: 'x'.repeat(1025) }, 'Skill description must be 1024'],
    // 600 code points (the Agent Skills rule counts them) are 1,200 UTF-16 code units (.NET counts those).
    ['600 astral characters', { description: '😀'.repeat(600) }, 'Skill description must be 1024'],
    ['a URI naming another directory', { uri: 'skill://other/SKILL.md' }, 'must end with its frontmatter name'],
    ['a URI not ending in /SKILL.md', { uri: 'skill://alpha/skill.md' }, 'an absolute SKILL.md resource URI'],
  ])('%s → %s', (_label, fields, reason) => {
    const found = agentFrameworkRefusal({ ...skill('alpha'), ...fields });
    if (reason === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(reason);
  });
});

describe('the arithmetic is the server’s', () => {
  it('skills/list pages hold what a host keeps: the same bounds as the handlers', () => {
    expect(SKILLS_PAGE_MAX).toBe(EXTENSION_MAX_SKILLS);
    expect(SKILLS_PAGE_MAX_BYTES).toBe(EXTENSION_MAX_ENTRY_BYTES);
  });

  it("the profiles' hosts are all shown", () => {
    expect(new Set(hostViews([], { catalogMax: 4096, pages: [] }).map((one) => one.id.split('+')[0]))).toEqual(
      new Set(HOST_PROFILES.map((profile) => profile.id)),
    );
    expect(AGENT_FRAMEWORK.extension?.failsOnInvalidEntry).toBe(true);
    expect(extensionDecline(skill('x', { manifestBytes: 2_000_000 }), GEMINI_FORK.extension ?? { shipped: true })).toBe(
      undefined,
    );
  });

  let root: string;
  beforeAll(async () => {
    const deep = Array.from({ length: 9 }, (_, index) => `${String(index)}${'d'.repeat(239)}`).join('/');
    root = await makeTree({
      'plain/SKILL.md': skillMd('plain', 'A plain skill.'),
      'acme/gr$p/dollar/SKILL.md': skillMd('dollar', 'Under a folder with a dollar sign.'),
      'deep/SKILL.md': skillMd('deep', 'A skill with a very long file URI.'),
      [`deep/${deep}/notes.md`]: 'notes\n',
      'huge/SKILL.md': `${skillMd('huge', 'A SKILL.md over 1 MB.')}${'word '.repeat(200_100)}\n`,
    });
  });
  afterAll(async () => {
    await removeTree(root);
  });

  it('extensionDecline with Claude Code’s limits declines exactly what the server takes hosts to decline', async () => {
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(snapshot.ordered.map((record) => record.name)).toEqual(['dollar', 'deep', 'huge', 'plain']);
    const skills = await hostSkills(snapshot, HOST_PROFILES);
    const client = CLAUDE_CODE.extension ?? { shipped: false };
    expect(skills.map((one) => extensionDecline(one, client)?.id)).toEqual([
      'uri-dollar',
      'uri-bytes',
      'manifest-bytes',
      undefined,
    ]);
    expect(snapshot.ordered.map((record) => declinedByHosts(record))).toEqual([true, true, true, false]);
    expect(skills[2]?.manifestChars).toBe(skills[2]?.manifestBytes);
  });
});
