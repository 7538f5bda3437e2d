/**
 * The trees `npm run test:hosts` serves to each host, what the server publishes for them (read with the built CLI's
 * `manifest`, so the expectations follow the tree, not the code under test's compat surfaces), and the suite each
 * host test declares per tree.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe } from 'vitest';

import { cli } from '../helpers/cli.js';
import { SAMPLE_SKILLS } from '../helpers/server.js';
import type { ServedSkill } from './discoverability.js';
import { CORPUS, generatedCatalog, type HostName, HostUser, type TmuxSession } from './harness.js';

/** One tree a host is pointed at. */
export interface HostCase {
  readonly label: string;
  /** Why the case cannot run here (printed, and the case skipped), or `undefined`. */
  readonly skip?: string;
  /** Makes the tree (a copy or a generated one when it will be changed) and returns its path. */
  readonly prepare: () => string;
  /** A skill whose prompt the test runs: its prompt name and SKILL.md path relative to the tree. */
  readonly prompt: { readonly name: string; readonly file: string };
  /** Whether the test edits the tree while the host runs (only on copies). */
  readonly live: boolean;
  /** Flags after the tree. */
  readonly flags: readonly string[];
  /** Whether the scripted model loop runs on this tree (it loads a skill of `sample-skills/`). */
  readonly loop: boolean;
  /**
   * A skill past what `read_skill`'s catalog holds, which the scripted model finds with `search_skills` (`query`) and
   * reads with `read_skill`; its SKILL.md path relative to the tree.
   */
  readonly beyond?: { readonly name: string; readonly file: string; readonly query: string };
}

/** What the server serves for a tree. */
export interface Published {
  /** Served skills (the manifest's entries). */
  readonly skills: number;
  /** Distinct served files (nested skills share theirs). */
  readonly files: number;
  /** The served skills, in the manifest's order (that of `skills/list`). */
  readonly entries: readonly ServedSkill[];
}

const made: string[] = [];

/** Removes the trees the cases made. */
function removeCaseTrees(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function copyOf(source: string): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-tree-')));
  cpSync(source, dir, { recursive: true });
  made.push(dir);
  return dir;
}

export const HOST_CASES: readonly HostCase[] = [
  {
    label: 'sample-skills',
    prepare: () => copyOf(SAMPLE_SKILLS),
    prompt: { name: 'pdf-summaries', file: 'pdf-summaries/SKILL.md' },
    live: true,
    flags: [],
    loop: true,
  },
  {
    label: 'the shared anthropics-skills corpus',
    ...(existsSync(CORPUS) ? {} : { skip: `the shared corpus is absent (${CORPUS})` }),
    prepare: () => CORPUS,
    prompt: { name: 'brand-guidelines', file: 'brand-guidelines/SKILL.md' },
    live: false,
    flags: [],
    loop: false,
  },
  {
    label: 'a generated 400-skill catalog',
    prepare: () => {
      const dir = generatedCatalog(400);
      made.push(dir);
      return dir;
    },
    prompt: { name: 'terraform-helper-000', file: 'terraform-helper-000/SKILL.md' },
    beyond: { name: 'terraform-helper-250', file: 'terraform-helper-250/SKILL.md', query: 'terraform task 250' },
    live: false,
    // The default (watching) mode: tools/list waits for the first build, so read_skill's description holds the catalog.
    flags: [],
    loop: false,
  },
];

/** What `skills-serve manifest` publishes for `dir`. */
export function published(dir: string): Published {
  const run = cli(['manifest', dir]);
  if (run.status !== 0) throw new Error(`skills-serve manifest ${dir} exited with ${run.status}:\n${run.stderr}`);
  const manifest = JSON.parse(run.stdout) as {
    skills: { uri: string; frontmatter: { name: string; description: string }; resources: { uri: string }[] }[];
  };
  const files = new Set(manifest.skills.flatMap((skill) => skill.resources.map((resource) => resource.uri)));
  const entries = manifest.skills.map((skill) => ({
    name: skill.frontmatter.name,
    description: skill.frontmatter.description,
    uri: skill.uri,
  }));
  return { skills: manifest.skills.length, files: files.size, entries };
}

/** The SKILL.md text of the case's prompt skill. */
export function promptManifest(dir: string, hostCase: HostCase): string {
  return readFileSync(path.join(dir, hostCase.prompt.file), 'utf8');
}

/**
 * The server instructions, the same for every connection and naming no skill (they go out before a host shows whether
 * it lists skills itself): the catalog is in read_skill's description instead.
 */
export const INSTRUCTIONS =
  'Agent Skills for specialised tasks. Before such a task, find a skill with the search_skills tool (a few words from the task) or list_skills, read it with read_skill, and follow its SKILL.md; read the files it names with read_skill_file. Skills your host lists in its own skill list can be loaded from there instead. Your host may show these tools with a prefix (such as mcp__skills__read_skill or skills_read_skill).';

/** What the tests of one host on one case work with, from their `beforeAll` on. */
export interface CaseRun {
  /** The case's tree. */
  readonly tree: string;
  /** What the server publishes for it. */
  readonly expected: Published;
  /** The host's user, configured with the server on the tree. */
  readonly user: HostUser;
  /** The server's own cache directory, with `ownCache`. */
  readonly cache?: string;
}

/** How {@link describeHostCases} configures the server in the host. */
export interface CaseOptions {
  /** A fresh, empty cache directory for the server (`--cache-dir`), removed after the suite. */
  readonly ownCache?: boolean;
  /** The server entry says `"alwaysLoad": true` (Claude Code). */
  readonly alwaysLoad?: boolean;
}

/**
 * Declares `<title> on <case label>` for every host case, skipped where the case cannot run (the reason printed).
 * Before its first test, the case's tree is made, what the server publishes for it read, and a {@link HostUser} of
 * `host` configured with the server on it; after its last, the user is closed, and the cache and the tree (unless it
 * is the shared corpus) removed.
 *
 * @param tests declares the suite's tests; they read `run` once it is set.
 */
export function describeHostCases(
  title: string,
  host: HostName,
  tests: (hostCase: HostCase, run: CaseRun) => void,
  options: CaseOptions = {},
): void {
  for (const hostCase of HOST_CASES) {
    if (hostCase.skip !== undefined) process.stdout.write(`skipping ${title} on ${hostCase.label}: ${hostCase.skip}\n`);
    describe.skipIf(hostCase.skip !== undefined)(`${title} on ${hostCase.label}`, () => {
      const run = {} as { -readonly [K in keyof CaseRun]: CaseRun[K] };
      beforeAll(() => {
        run.tree = hostCase.prepare();
        run.expected = published(run.tree);
        if (options.ownCache === true)
          run.cache = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-cache-')));
        const flags = [...hostCase.flags, ...(run.cache === undefined ? [] : ['--cache-dir', run.cache])];
        run.user = new HostUser(host, [run.tree, ...flags], { alwaysLoad: options.alwaysLoad === true });
      });
      afterAll(async () => {
        await run.user?.close();
        if (run.cache !== undefined) rmSync(run.cache, { recursive: true, force: true });
        // Suites run one at a time: the trees made so far are this suite's.
        removeCaseTrees();
      });
      tests(hostCase, run);
    });
  }
}

/**
 * Adds the skill `live-added` to the case's tree while the host runs, and waits until the host heard
 * `notifications/prompts/list_changed` and listed one prompt more than the tree started with.
 */
export async function addSkillWhileRunning(run: CaseRun, session: TmuxSession): Promise<void> {
  const heard = (): number => run.user.notifications('notifications/prompts/list_changed').length;
  const before = heard();
  mkdirSync(path.join(run.tree, 'live-added'));
  writeFileSync(
    path.join(run.tree, 'live-added', 'SKILL.md'),
    '---\nname: live-added\ndescription: Added while the host runs.\n---\n# Live\n',
  );
  await session.waitForPane(
    () =>
      heard() > before &&
      (run.user.results('prompts/list').at(-1) as { prompts: unknown[] }).prompts.length === run.expected.skills + 1,
    'prompts/list_changed and a new prompts/list',
  );
}
