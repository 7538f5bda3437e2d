/**
 * Diagnostics as hosts receive them (`notifications/message`, level warning): the same facts as on stderr, with
 * every host path replaced by its place in the `skill://` namespace, so nothing on the wire reveals the machine's
 * layout (pure).
 */
import path from 'node:path';

import type { Diagnostic, RootSpec } from '../index/types.js';
import type { Logger } from '../log.js';
import { isPathWithin } from '../paths.js';
import { isVisible, type Visibility } from './visibility.js';

/**
 * The `data` of a diagnostic's `notifications/message`: a {@link Diagnostic} whose `file`, `message` and `hint` name
 * places relative to their root (`<root 1>/acme/refunds/SKILL.md`, roots numbered from 1 in command-line order).
 */
export type PublicDiagnostic = Diagnostic;

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
 * One stderr line per diagnostic: file[:line], what is wrong, the rule and the fix; structured fields for filters
 * (`event: "diagnostic"`, `rule`, `severity`, `skipped: "skill"` for errors, which leave a skill out; `code` of an
 * unusable root, `winner` of a skill-path conflict).
 */
export function logDiagnostic(logger: Logger, diagnostic: Diagnostic): void {
  const where = diagnostic.line === undefined ? diagnostic.file : `${diagnostic.file}:${diagnostic.line}`;
  const text = `${where}: ${diagnostic.message} [${diagnostic.rule}]; fix: ${diagnostic.hint}`;
  const fields = {
    event: 'diagnostic',
    rule: diagnostic.rule,
    file: diagnostic.file,
    line: diagnostic.line,
    hint: diagnostic.hint,
    ...(diagnostic.code === undefined ? {} : { code: diagnostic.code }),
    ...(diagnostic.winner === undefined ? {} : { winner: diagnostic.winner }),
  };
  logger.warn(
    { ...fields, severity: diagnostic.severity, ...(diagnostic.severity === 'error' ? { skipped: 'skill' } : {}) },
    text,
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
 * `--http-tokens` view, only those about a file or folder inside what it sees (never a root's own, or another team's).
 *
 * @param diagnostics the snapshot's diagnostics (host paths).
 * @param roots the configured roots (labels, and where each file sits in the namespace).
 * @param view the client's view; `undefined` sees everything.
 * @returns {@link PublicDiagnostic}s, in the snapshot's order.
 */
export function diagnosticsInView(
  diagnostics: readonly Diagnostic[],
  roots: readonly RootSpec[],
  view: Visibility | undefined,
): PublicDiagnostic[] {
  const seen =
    view === undefined
      ? diagnostics
      : diagnostics.filter((diagnostic) => {
          const segments = namespacePathOf(diagnostic.file, roots);
          return segments !== undefined && isVisible(view, segments);
        });
  return seen.map((diagnostic) => publicDiagnostic(diagnostic, roots));
}
