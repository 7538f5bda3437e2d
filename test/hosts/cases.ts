/**
 * The trees `npm run test:hosts` serves to each host, and what the server publishes for them (read with the built
 * CLI's `manifest`, so the expectations follow the tree, not the code under test's compat surfaces).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BIN, SAMPLE_SKILLS } from '../helpers/server.js';
import { CORPUS, generatedCatalog } from './harness.js';

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
}

/** What the server serves for a tree. */
export interface Published {
  /** Served skills (the manifest's entries). */
  readonly skills: number;
  /** Distinct served files (nested skills share theirs). */
  readonly files: number;
}

const made: string[] = [];

/** Removes the trees the cases made. */
export function removeCaseTrees(): void {
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
  },
  {
    label: 'the shared anthropics-skills corpus',
    ...(existsSync(CORPUS) ? {} : { skip: `the shared corpus is absent (${CORPUS})` }),
    prepare: () => CORPUS,
    prompt: { name: 'brand-guidelines', file: 'brand-guidelines/SKILL.md' },
    live: false,
    flags: [],
  },
  {
    label: 'a generated 400-skill catalog',
    prepare: () => {
      const dir = generatedCatalog(400);
      made.push(dir);
      return dir;
    },
    prompt: { name: 'terraform-helper-000', file: 'terraform-helper-000/SKILL.md' },
    live: false,
    // The default (watching) mode: initialize waits for the first build, so the instructions list the catalog.
    flags: [],
  },
];

/** What `skills-serve manifest` publishes for `dir`. */
export function published(dir: string): Published {
  const run = spawnSync(process.execPath, [BIN, 'manifest', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const manifest = JSON.parse(run.stdout) as { skills: { resources: { uri: string }[] }[] };
  const files = new Set(manifest.skills.flatMap((skill) => skill.resources.map((resource) => resource.uri)));
  return { skills: manifest.skills.length, files: files.size };
}

/** The SKILL.md text of the case's prompt skill. */
export function promptManifest(dir: string, hostCase: HostCase): string {
  return readFileSync(path.join(dir, hostCase.prompt.file), 'utf8');
}

/** The pointer paragraph the instructions must carry for a catalog of `skills` skills. */
export const POINTER =
  /^(?:All (\d+) skills are listed below; the list_skills tool returns the same catalog\.|(\d+) of the (\d+) skills are listed below \(to keep these instructions short\)\. To find the others, call the search_skills tool with a few words from the task, or the list_skills tool for the full catalog\.)$/u;

/**
 * Checks that `instructions` are within `budget`, that the pointer is the second paragraph and says how many catalog
 * lines follow, and returns how many skills it lists (`initialize` waits for the first index build: the catalog is
 * always there).
 *
 * @throws when any of that does not hold.
 */
export function checkInstructions(instructions: string, budget: number, skills: number): number {
  if (instructions.length > budget)
    throw new Error(`instructions are ${instructions.length} characters, over ${budget}`);
  const paragraphs = instructions.split('\n\n');
  const [intro, pointer, catalog, ...rest] = paragraphs;
  if (rest.length > 0 || intro === undefined || pointer === undefined || catalog === undefined)
    throw new Error(`unexpected paragraphs in:\n${instructions}`);
  const match = POINTER.exec(pointer);
  if (match === null) throw new Error(`the second paragraph is not the pointer: ${pointer}`);
  const listed = Number(match[1] ?? match[2]);
  const total = Number(match[1] ?? match[3]);
  const lines = catalog.split('\n');
  if (total !== skills) throw new Error(`the pointer counts ${total} skills; ${skills} are served`);
  if (lines.length !== listed + 1 || !lines.slice(1).every((line) => line.startsWith('- ')))
    throw new Error(`the pointer says ${listed} listed; the catalog has ${lines.length - 1} lines`);
  return listed;
}
