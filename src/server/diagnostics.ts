/**
 * Diagnostics as hosts receive them (`notifications/message`, level warning): the same facts as on stderr, with
 * every host path replaced by its place in the `skill://` namespace, so nothing on the wire reveals the machine's
 * layout (pure).
 */
import path from 'node:path';

import { executablesWithheld } from '../index/diagnostics.js';
import type { Diagnostic, RootSpec, Snapshot } from '../index/types.js';
import type { Logger } from '../log.js';
import { isPathWithin } from '../paths.js';
import { isVisible, isWithheld, type Visibility, withheldSkills } from './visibility.js';

/**
 * The `data` of a diagnostic's `notifications/message`: a {@link Diagnostic} whose `file`, `message` and `hint` name
 * places relative to their root (`<root 1>/acme/refunds/SKILL.md`, roots numbered from 1 in command-line order).
 */
export type PublicDiagnostic = Diagnostic;

/** The `notifications/message` level a diagnostic goes to hosts at: `info` for an info-level one, else `warning`. */
export function logLevelOf(diagnostic: Pick<Diagnostic, 'severity'>): 'info' | 'warning' {
  return diagnostic.severity === 'info' ? 'info' : 'warning';
}

/**
 * Rewrites a diagnostic for the wire.
 *
 * @param diagnostic as the index reported it (absolute host paths).
 * @param roots the configured roots, whose directories are replaced by `<root N>` (or `<root N: prefix>`).
 */
export function publicDiagnostic(diagnostic: Diagnostic, roots: readonly RootSpec[]): PublicDiagnostic {
  // Longest directories first, so a root nested in another is replaced by its own label.
  const labels = roots
    .map((root, index) => ({
      dir: root.dir,
      label: root.prefix.length === 0 ? `<root ${index + 1}>` : `<root ${index + 1}: ${root.prefix.join('/')}>`,
    }))
    .sort((a, b) => b.dir.length - a.dir.length);
  const scrub = (text: string): string =>
    labels.reduce((result, { dir, label }) => result.split(dir).join(label), text);
  return {
    severity: diagnostic.severity,
    rule: diagnostic.rule,
    file: scrub(diagnostic.file),
    ...(diagnostic.line === undefined ? {} : { line: diagnostic.line }),
    ...(diagnostic.column === undefined ? {} : { column: diagnostic.column }),
    message: scrub(diagnostic.message),
    hint: scrub(diagnostic.hint),
  };
}

/**
 * Logs the diagnostics that appeared with one snapshot: each one at `info` (event `diagnostic`, with the file, line,
 * rule and fix), and one `warn` line for them all (event `diagnostics`; `info` when all are info-level), so that a
 * host that records a server's stderr as errors records one line a start, not one a skill (docs/operations.md,
 * "Logs"). Hosts also hear each diagnostic as a log message; `check` prints them with their fixes.
 *
 * @param level the level of each diagnostic's own line (`error` when `--strict` refuses to serve).
 */
export function logDiagnostics(
  logger: Logger,
  diagnostics: readonly Diagnostic[],
  level: 'info' | 'error' = 'info',
): void {
  if (diagnostics.length === 0) return;
  for (const diagnostic of diagnostics) {
    const where = diagnostic.line === undefined ? diagnostic.file : `${diagnostic.file}:${diagnostic.line}`;
    logger[level](
      {
        event: 'diagnostic',
        rule: diagnostic.rule,
        file: diagnostic.file,
        line: diagnostic.line,
        hint: diagnostic.hint,
        ...(diagnostic.code === undefined ? {} : { code: diagnostic.code }),
        ...(diagnostic.winner === undefined ? {} : { winner: diagnostic.winner }),
        severity: diagnostic.severity,
        ...(diagnostic.severity === 'error' ? { skipped: 'skill' } : {}),
      },
      `${where}: ${diagnostic.message} [${diagnostic.rule}]; fix: ${diagnostic.hint}`,
    );
  }
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  const info = diagnostics.filter((diagnostic) => diagnostic.severity === 'info').length;
  const warnings = diagnostics.length - errors - info;
  const counted = [
    ...(errors === 0 ? [] : [`${errors} skill${errors === 1 ? '' : 's'} not served`]),
    ...(warnings === 0 ? [] : [`${warnings} warning${warnings === 1 ? '' : 's'}`]),
    ...(info === 0 ? [] : [`${info} note${info === 1 ? '' : 's'}`]),
  ].join(' and ');
  const [first] = diagnostics as [Diagnostic, ...Diagnostic[]];
  const example = `${first.file}${first.line === undefined ? '' : `:${first.line}`}: ${first.message} [${first.rule}]`;
  // Notes alone (skills withheld by the operator's choice) are no warning.
  logger[info === diagnostics.length ? 'info' : 'warn'](
    {
      event: 'diagnostics',
      errors,
      warnings,
      ...(info === 0 ? {} : { info }),
      rules: [...new Set(diagnostics.map((diagnostic) => diagnostic.rule))],
    },
    `${counted} (${diagnostics.length === 1 ? example : `first: ${example}`}); run skills-serve check with the same roots for each with its fix`,
  );
}

/**
 * The skill-namespace path of a host path inside a root (the root's prefix, then the path's segments below the root
 * directory), or `undefined` for a root itself or a path outside every root.
 *
 * @param file an absolute host path, as diagnostics carry it.
 * @param roots the configured roots; the deepest root holding `file` decides.
 */
function namespacePathOf(file: string, roots: readonly RootSpec[]): string[] | undefined {
  let best: RootSpec | undefined;
  for (const root of roots) {
    if (file !== root.dir && isPathWithin(file, root.dir) && (best === undefined || root.dir.length > best.dir.length))
      best = root;
  }
  if (best === undefined) return undefined;
  return [...best.prefix, ...file.slice(best.dir.length + 1).split(path.sep)];
}

/**
 * The diagnostics a client may hear, as it hears them: all of them for a client that sees everything; for a
 * `--http-tokens` view, only those about a file or folder inside what it sees (never a root's own, or another team's),
 * none about a skill it withholds, and one `executables-withheld` for each such skill.
 *
 * @param snapshot the snapshot whose diagnostics (host paths) and skills are told.
 * @param roots the configured roots (labels, and where each file sits in the namespace).
 * @param view the client's view; `undefined` sees everything.
 * @returns {@link PublicDiagnostic}s, in the snapshot's order, then the skills the view withholds.
 */
export function diagnosticsInView(
  snapshot: Snapshot,
  roots: readonly RootSpec[],
  view: Visibility | undefined,
): PublicDiagnostic[] {
  const { diagnostics } = snapshot;
  const seen =
    view === undefined
      ? diagnostics
      : diagnostics.filter((diagnostic) => {
          const segments = namespacePathOf(diagnostic.file, roots);
          return segments !== undefined && isVisible(view, segments) && !isWithheld(snapshot, view, segments);
        });
  const withheld = withheldSkills(snapshot, view).map(({ skill, enclosing }) =>
    executablesWithheld(
      // Named under the root as configured (the real path may lie elsewhere, and would not be scrubbed).
      path.join(roots[skill.rootIndex]?.dir ?? '', ...skill.rel.split('/'), 'SKILL.md'),
      skill.uri,
      skill.executables,
      enclosing?.uri,
      `"withholdExecutables" of token ${view?.name ?? ''}`,
    ),
  );
  return [...seen, ...withheld].map((diagnostic) => publicDiagnostic(diagnostic, roots));
}
