/**
 * `skills-serve check --hosts`: runs the same index as `serve`, then shows, per host profile (`hosts/profiles.ts`),
 * what the host's model and user will see of the catalog (`hosts/views.ts`): one summary line per host, then only the
 * exceptions. `--json` gives every skill of every host.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import {
  EXTENSION_MAX_ENTRY_BYTES,
  EXTENSION_MAX_SKILLS,
  HOST_PROFILES,
  type HostProfile,
  PROMPTS_PAGE_SIZE,
} from '../hosts/profiles.js';
import {
  type Cap,
  type Decline,
  type HostSkill,
  type HostView,
  hostViews,
  type SkillRow,
  strictFailures,
} from '../hosts/views.js';
import { longestResourceUriBytes, pageOf } from '../index/snapshot.js';
import { type Diagnostic, type SkillRecord, type Snapshot } from '../index/types.js';
import { parseSkillUri } from '../index/uri.js';
import type { SourceSpec } from '../roots/kinds.js';
import { diagnosticLines, plural } from './check.js';
import { type CommandOptions, snapshotOf } from './snapshot-once.js';

/** The `--json` document of `check --hosts`. */
export interface HostsReport {
  /** The `--catalog-max` and `--page-size` the views were worked out for. */
  readonly catalogMax: number;
  readonly pageSize: number;
  /** Served skills, skills left out by the index, other diagnostics (as `check` counts them). */
  readonly summary: { readonly served: number; readonly leftOut: number; readonly warnings: number };
  /** Every diagnostic of the index, as `check --json` gives them: the skills left out say why here. */
  readonly diagnostics: readonly Diagnostic[];
  readonly hosts: readonly HostView[];
}

/** The options of `check --hosts`. */
export interface CheckHostsOptions extends CommandOptions {
  readonly json: boolean;
  readonly strict?: boolean;
  /** Paths under it are shown relative to it (default: the working directory). */
  readonly cwd?: string;
  readonly catalogMax: number;
  readonly pageSize: number;
  /** Host profiles (default: every one). */
  readonly profiles?: readonly HostProfile[];
}

/**
 * Runs `check --hosts` over `sources`.
 *
 * @returns the exit code: 1 when any skill was left out; with `strict`, also when the index has any diagnostic, or a
 *   released host, as it ships, cuts a description, leaves a skill past a cap, or refuses the server. Else 0.
 */
export async function runCheckHosts(sources: readonly SourceSpec[], options: CheckHostsOptions): Promise<number> {
  const snapshot = await snapshotOf(sources, options);
  if (typeof snapshot === 'number') return snapshot;
  const profiles = options.profiles ?? HOST_PROFILES;
  const skills = await hostSkills(snapshot, profiles);
  const hosts = hostViews(skills, { catalogMax: options.catalogMax, pages: listPages(snapshot, options), profiles });
  const leftOut = snapshot.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  const report: HostsReport = {
    catalogMax: options.catalogMax,
    pageSize: options.pageSize,
    summary: { served: skills.length, leftOut, warnings: snapshot.diagnostics.length - leftOut },
    diagnostics: snapshot.diagnostics,
    hosts,
  };
  options.write(
    options.json ? `${JSON.stringify(report, null, 2)}\n` : formatHostsReport(report, options.cwd ?? process.cwd()),
  );
  if (leftOut > 0) return 1;
  const failing =
    options.strict === true &&
    (snapshot.diagnostics.length > 0 || hosts.some((view) => strictFailures(view).length > 0));
  return failing ? 1 : 0;
}

/**
 * The sizes of the `skills/list` pages `serve` answers: `--page-size` entries, at most the 100 entries and 512 KiB of
 * entry JSON a host keeps of a server, no page crossing the 100th entry (`SKILLS_PAGE_MAX` in `server/`).
 */
function listPages(snapshot: Snapshot, options: { readonly pageSize: number }): number[] {
  const budget = {
    max: EXTENSION_MAX_ENTRY_BYTES,
    sizeOf: (skill: SkillRecord) => Buffer.byteLength(skill.json),
    boundary: EXTENSION_MAX_SKILLS,
  };
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = pageOf(
      snapshot.ordered,
      cursor,
      Math.min(options.pageSize, EXTENSION_MAX_SKILLS),
      (skill) => skill.uri,
      budget,
    );
    if (page.items.length > 0) pages.push(page.items.length);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** What the views read of each served skill; a `SKILL.md` is read only when a host may cut the result holding it. */
export async function hostSkills(snapshot: Snapshot, profiles: readonly HostProfile[]): Promise<HostSkill[]> {
  const cuts = profiles.flatMap((profile) => (profile.toolResultChars === undefined ? [] : [profile.toolResultChars]));
  const smallestCut = Math.min(Infinity, ...cuts);
  return Promise.all(
    snapshot.ordered.map(async (skill) => ({
      uri: skill.uri,
      segments: skill.segments,
      name: skill.name,
      description: skill.description,
      modelInvocable: skill.modelInvocable,
      userInvocable: skill.userInvocable,
      entryBytes: Buffer.byteLength(skill.json),
      manifestBytes: skill.manifestSize,
      ...(skill.manifestSize > smallestCut ? { manifestChars: await manifestChars(skill) } : {}),
      longestUriBytes: longestResourceUriBytes(skill),
    })),
  );
}

/** UTF-16 length of a skill's `SKILL.md` as `read_skill` sends it (its bytes as an upper bound if it is gone). */
async function manifestChars(skill: SkillRecord): Promise<number> {
  try {
    return new TextDecoder().decode(await readFile(path.join(skill.dirReal, 'SKILL.md'))).length;
  } catch {
    return skill.manifestSize;
  }
}

/**
 * Renders the report as text: per host, a summary line (how many skills its model is shown in full, through which
 * channel, how many prompts its user gets), then one indented line per kind of exception; then `check`'s summary.
 */
export function formatHostsReport(report: HostsReport, cwd: string): string {
  const blocks = report.hosts.map((view) => [summaryLine(view), ...exceptionLines(view)].join('\n'));
  // What the index left out or warns about, as `check` says it: no host shows a skill left out, so say why.
  if (report.diagnostics.length > 0) blocks.push(diagnosticLines(report.diagnostics, cwd).join('\n'));
  const { served, leftOut, warnings } = report.summary;
  const last = `${plural(served, 'skill')} served, ${leftOut} left out, ${plural(warnings, 'warning')}`;
  return `${[...blocks, last].join('\n\n')}\n`;
}

/** `1,234` grouping. */
const count = (value: number): string => value.toLocaleString('en-US');

function summaryLine(view: HostView): string {
  const prompts =
    view.prompts === undefined
      ? 'no prompts (the host lists none)'
      : view.prompts === 0 && view.rows.length > 0 && view.rows.every((row) => row.noPrompt === 'own-list')
        ? 'no prompts (the host lists every skill itself)'
        : `${plural(view.prompts, 'prompt')} for the user`;
  if (view.refused !== undefined)
    return `${view.label}: 0 of ${plural(view.skills, 'skill')}: it refuses the server (one entry it finds invalid fails its whole discovery); ${prompts}`;
  const head = `${view.label}: ${count(view.full)} of ${plural(view.skills, 'skill')} described in full`;
  const { catalog, extension } = view;
  const catalogText =
    catalog === undefined
      ? undefined
      : `${count(catalog.chars)} of ${count(catalog.max)} chars${catalog.hostCut === undefined ? '' : `, the host shows ${count(catalog.hostCut)}`}`;
  if (extension === undefined)
    return `${head} in the first request (read_skill catalog, ${catalogText ?? ''}); ${prompts}`;
  const own = `own skill list: ${count(extension.listed)}${extension.descriptionChars === undefined ? '' : `, descriptions up to ${count(extension.descriptionChars)} chars`}`;
  const inCatalog = view.rows.some((row) => row.channel === 'catalog' || row.cap?.id === 'catalog-max');
  const rest =
    catalog !== undefined && inCatalog ? `; read_skill catalog: ${count(catalog.lines)}, ${catalogText ?? ''}` : '';
  return `${head} (${own}${rest}); ${prompts}`;
}

/** The skill path of a row (`acme/billing/refunds`), as authors name their folders. */
function pathOf(row: SkillRow): string {
  const segments = parseSkillUri(row.uri);
  return segments === undefined ? row.uri : segments.slice(0, -1).join('/');
}

/** `a, b, c` or, past six, the first five and how many more (`--json` lists every one). */
function listOf(items: readonly string[]): string {
  return items.length <= 6 ? items.join(', ') : `${items.slice(0, 5).join(', ')} and ${count(items.length - 5)} more`;
}

/** `3 skills: a, b, c`. */
function skillsOf(rows: readonly SkillRow[], item: (row: SkillRow) => string = pathOf): string {
  return `${plural(rows.length, 'skill')}: ${listOf(rows.map(item))}`;
}

const CUT: Record<string, (limit: number) => string> = {
  'extension-description': (limit) => `cut at ${count(limit)} chars in the host's own skill list`,
  'tool-description': (limit) => `cut where the host stops showing read_skill's description (${count(limit)} chars)`,
};

const PAST: Record<Cap['id'], (limit: number) => string> = {
  'catalog-max': (limit) => `past read_skill's catalog budget (--catalog-max ${count(limit)})`,
  'tool-description': (limit) => `past the ${count(limit)} chars of read_skill's description the host shows`,
  'extension-description': (limit) => `past the ${count(limit)} chars of a description the host shows`,
  'extension-skills': (limit) => `dropped past the host's ${count(limit)}-skill cap`,
  'extension-bytes': (limit) => `dropped past the host's ${count(limit)} bytes of entries`,
  'extension-pages': (limit) =>
    limit === 1
      ? 'past the first skills/list page, the only one the host reads'
      : `past the ${count(limit)} skills/list pages the host reads`,
};

function declineText(decline: Decline): string {
  switch (decline.id) {
    case 'manifest-bytes':
      return `SKILL.md is ${count(decline.bytes)} bytes, over ${count(decline.limit)}`;
    case 'uri-dollar':
      return 'its URI holds "$"';
    case 'uri-bytes':
      return `a URI of ${count(decline.bytes)} bytes, over ${count(decline.limit)}`;
  }
}

/** Rows grouped by a key, groups in the order their first row comes. */
function groupBy(rows: readonly SkillRow[], key: (row: SkillRow) => string | undefined): [string, SkillRow[]][] {
  const groups = new Map<string, SkillRow[]>();
  for (const row of rows) {
    const at = key(row);
    if (at === undefined) continue;
    const group = groups.get(at);
    if (group === undefined) groups.set(at, [row]);
    else group.push(row);
  }
  return [...groups];
}

function exceptionLines(view: HostView): string[] {
  const lines: string[] = [];
  const { rows } = view;
  if (view.refused !== undefined) lines.push(`  refused entry: ${view.refused.uri}: ${view.refused.reason}`);
  for (const [, group] of groupBy(rows, (row) =>
    row.model === 'cut' ? `${row.cap?.id}:${row.cap?.limit}` : undefined,
  )) {
    const cap = (group[0] as SkillRow).cap as Cap;
    lines.push(
      `  ${(CUT[cap.id] ?? PAST[cap.id])(cap.limit)}: ${skillsOf(group, (row) => `${pathOf(row)} (${count(row.shownChars ?? 0)} of ${count(row.descriptionChars)} chars)`)}`,
    );
  }
  for (const [, group] of groupBy(rows, (row) =>
    row.model === 'past-cap' ? `${row.cap?.id}:${row.cap?.limit}` : undefined,
  )) {
    const cap = (group[0] as SkillRow).cap as Cap;
    const reach = group.every((row) => row.reachable === true)
      ? `; search_skills and list_skills reach ${group.length === 1 ? 'it' : 'them'}`
      : group.every((row) => row.reachable !== true)
        ? `; its model cannot reach ${group.length === 1 ? 'it' : 'them'}`
        : '';
    lines.push(`  ${PAST[cap.id](cap.limit)}: ${skillsOf(group)}${reach}`);
  }
  const userOnly = rows.filter((row) => row.model === 'user-only');
  if (userOnly.length > 0) {
    const none =
      view.prompts === undefined
        ? `; the host lists no prompts, so its user cannot run ${userOnly.length === 1 ? 'it' : 'them'} either`
        : '';
    lines.push(
      `  not shown to the model (disable-model-invocation: true): ${skillsOf(userOnly, (row) => (row.prompt === undefined ? pathOf(row) : `${pathOf(row)} (prompt ${row.prompt})`))}${none}`,
    );
  }
  const noPrompt = rows.filter((row) => row.noPrompt === 'user-invocable');
  if (noPrompt.length > 0) lines.push(`  no prompt (user-invocable: false): ${skillsOf(noPrompt)}`);
  const pastPrompts = rows.filter((row) => row.noPrompt === 'prompts-page');
  if (pastPrompts.length > 0)
    lines.push(
      `  no prompt past the first prompts/list page (${count(PROMPTS_PAGE_SIZE)}; the host reads one): ${skillsOf(pastPrompts)}`,
    );
  const declined = rows.filter((row) => row.declined !== undefined);
  if (declined.length > 0)
    lines.push(
      `  declined by the host's extension client, offered through read_skill's catalog and prompts instead: ${skillsOf(declined, (row) => `${pathOf(row)} (${declineText(row.declined as Decline)})`)}`,
    );
  for (const [, group] of groupBy(rows, (row) =>
    row.result === undefined ? undefined : String(row.result.keptChars),
  )) {
    const kept = (group[0] as SkillRow).result?.keptChars ?? 0;
    lines.push(
      `  read_skill's result longer than the ${count(kept)} chars the host passes whole (read_skill says how to read the rest): ${skillsOf(group, (row) => `${pathOf(row)} (SKILL.md ${count(row.result?.manifestChars ?? 0)} chars)`)}`,
    );
  }
  for (const collision of view.collisions) {
    const members = collision.uris.map((uri) => {
      const row = rows.find((candidate) => candidate.uri === uri) as SkillRow;
      const shown = [
        row.channel === 'extension' ? `in the host's own list as ${row.name}` : undefined,
        row.channel === 'catalog' ? `catalog line with ${row.uri}` : undefined,
        row.prompt === undefined ? undefined : `prompt ${row.prompt}`,
      ].filter((part) => part !== undefined);
      return `${pathOf(row)} (${shown.length === 0 ? 'not shown' : shown.join(', ')})`;
    });
    lines.push(`  name "${collision.name}" shared by ${count(members.length)} skills: ${members.join('; ')}`);
  }
  return lines;
}
