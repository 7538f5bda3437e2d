/**
 * `skills-serve check`: runs the same index as `serve` and reports every skill and every diagnostic, for skill
 * authors before they ship and for CI. Exit 1 when any skill was left out.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { planFeed } from '../feed/feed.js';
import { descriptionNearDuplicate, executableContent } from '../index/diagnostics.js';
import { findKeyLine } from '../index/rules.js';
import type { Diagnostic, Snapshot } from '../index/types.js';
import type { SourceSpec } from '../roots/kinds.js';
import { crossSkillLinks } from './cross-links.js';
import { similarDescriptions } from './similar-descriptions.js';
import { type CommandOptions, snapshotOf } from './snapshot-once.js';

/** The `--json` document. */
export interface CheckReport {
  readonly skills: readonly { uri: string; name: string; files: number; bytes: number }[];
  readonly diagnostics: readonly Diagnostic[];
  /** `info`: info-level diagnostics (`executable-content`), which never fail a check, `--strict` included. */
  readonly summary: {
    readonly served: number;
    readonly leftOut: number;
    readonly warnings: number;
    readonly info: number;
  };
}

/**
 * What `check` reports of a build: the index's diagnostics, then the review of the catalog as a whole: links between
 * skills (`crossSkillLinks`), near-duplicate descriptions (`similarDescriptions`) and, at info level, the skills that
 * bundle executable content (one `executable-content` per skill, naming each file and why: docs/security.md).
 * (`check --hosts` reports the index's only: it is informational; `check` is the author's gate.)
 *
 * @param snapshot a complete build.
 */
function reviewedDiagnostics(snapshot: Snapshot): Diagnostic[] {
  return [
    ...snapshot.diagnostics,
    ...crossSkillLinks(snapshot.ordered),
    ...similarDescriptions(snapshot.ordered, (skill, like, similarity, more) => {
      const file = path.join(skill.dirReal, 'SKILL.md');
      return descriptionNearDuplicate(file, findKeyLine(readText(file), 'description'), like.uri, similarity, more);
    }),
    ...snapshot.ordered
      .filter((skill) => skill.executables.length > 0)
      .map((skill) => executableContent(path.join(skill.dirReal, 'SKILL.md'), skill.uri, skill.executables)),
  ];
}

/**
 * Summarizes a snapshot for `check`.
 *
 * @param snapshot a complete build.
 * @param feed add the skills the discovery feed leaves out (warnings, `feed-*`; docs/feed.md) after the others
 *   ({@link reviewedDiagnostics}).
 * @returns skills with file count and total bytes, every diagnostic, and counts (`leftOut` = error diagnostics,
 *   `info` = info-level ones, `warnings` = the rest).
 */
function checkReport(snapshot: Snapshot, feed: boolean): CheckReport {
  const diagnostics = [...reviewedDiagnostics(snapshot), ...(feed ? planFeed(snapshot.ordered).problems : [])];
  const skills = snapshot.ordered.map((skill) => ({
    uri: skill.uri,
    name: skill.name,
    files: skill.fileCount,
    bytes: skill.totalBytes,
  }));
  const leftOut = diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  const info = diagnostics.filter((diagnostic) => diagnostic.severity === 'info').length;
  return {
    skills,
    diagnostics,
    summary: { served: skills.length, leftOut, warnings: diagnostics.length - leftOut - info, info },
  };
}

/**
 * Renders the report as text: one line per skill, then each diagnostic with `file:line:column`, the rule, what is
 * wrong and how to fix it, then a summary line.
 *
 * @param report from {@link checkReport}.
 * @param cwd paths under it are shown relative to it.
 */
function formatCheckReport(report: CheckReport, cwd: string): string {
  const lines: string[] = [];
  const width = Math.max(0, ...report.skills.map((skill) => skill.uri.length));
  for (const skill of report.skills) {
    lines.push(`ok      ${skill.uri.padEnd(width)}  ${plural(skill.files, 'file')}, ${plural(skill.bytes, 'byte')}`);
  }
  if (report.skills.length > 0 && report.diagnostics.length > 0) lines.push('');
  lines.push(...diagnosticLines(report.diagnostics, cwd));
  const { served, leftOut, warnings, info } = report.summary;
  const notes = info === 0 ? '' : `, ${plural(info, 'note')}`;
  lines.push('', `${plural(served, 'skill')} served, ${leftOut} left out, ${plural(warnings, 'warning')}${notes}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `check` over `sources` (each opened once).
 *
 * @param options.feed also report the skills the discovery feed leaves out (`check --feed`).
 * @returns the exit code: 1 when any skill was left out (with `strict`, when there is any diagnostic but info), else
 *   0; a source that cannot be served exits with its error's code (1, or 2 for a configuration error).
 */
export async function runCheck(
  sources: readonly SourceSpec[],
  options: CommandOptions & { json: boolean; strict?: boolean; feed?: boolean; cwd?: string },
): Promise<number> {
  const snapshot = await snapshotOf(sources, options);
  if (typeof snapshot === 'number') return snapshot;
  const report = checkReport(snapshot, options.feed === true);
  options.write(
    options.json ? `${JSON.stringify(report, null, 2)}\n` : formatCheckReport(report, options.cwd ?? process.cwd()),
  );
  const failing = options.strict === true ? report.summary.leftOut + report.summary.warnings : report.summary.leftOut;
  return failing > 0 ? 1 : 0;
}

/**
 * Each diagnostic as two lines: `severity file:line:column: message [rule]`, then `fix: hint`.
 *
 * @param cwd paths under it are shown relative to it.
 */
export function diagnosticLines(diagnostics: readonly Diagnostic[], cwd: string): string[] {
  return diagnostics.flatMap((diagnostic) => {
    const shown = displayPath(diagnostic.file, cwd);
    const where =
      diagnostic.line === undefined
        ? shown
        : `${shown}:${diagnostic.line}${diagnostic.column === undefined ? '' : `:${diagnostic.column}`}`;
    return [
      `${diagnostic.severity.padEnd(7)} ${where}: ${diagnostic.message} [${diagnostic.rule}]`,
      `        fix: ${diagnostic.hint}`,
    ];
  });
}

/** `file` relative to `cwd` when it lies under it, else as given. */
export function displayPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/** `1 file`, `1,234 files` (`many`: the plural when it is not `noun` + `s`). */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : many}`;
}

/** A file's text, or `undefined` when it cannot be read now (changed since the build). */
function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
