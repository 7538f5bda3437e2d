/**
 * What a symlink met by the walk leads to, under the `--symlinks` policy (pure decision over one `realpath` and one
 * `stat`; docs/ARCHITECTURE.md, "Policies: symlinks").
 *
 * - `skip`: never followed.
 * - `follow`: followed wherever it points (loops and dangling links are still skipped).
 * - `within` (default): followed when its real path stays inside a served root; and, outside every skill, a link to a
 *   *skill folder* elsewhere (a directory holding a regular `SKILL.md`, as the `npx skills` installer links them into
 *   each host's folder) is followed too, with containment anchored at that folder: a link inside it that leaves it is
 *   refused.
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { isPathWithin } from '../paths.js';
import { specialFile, symlinkDangling, symlinkLoop, symlinkOutside, symlinkSkipped } from './diagnostics.js';
import { describeIoError } from './digest.js';
import { MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import type { Diagnostic } from './types.js';

/** Where the walk is when it meets a link. */
export interface LinkContext {
  readonly policy: SymlinkPolicy;
  /** Real paths of every served root. */
  readonly allowedRealRoots: readonly string[];
  /** Real path of the linked skill folder the link lies in, if any: then it must stay inside that folder. */
  readonly anchor: string | undefined;
  /** The link lies inside a skill (a linked skill folder is only taken where a skill may start). */
  readonly insideSkill: boolean;
  /** Real paths of the directories above the link (a link back up to one of them is a loop). */
  readonly ancestors: ReadonlySet<string>;
}

/** Where a followed link leads: a directory (with the anchor for what is inside it) or a regular file. */
export type LinkTarget =
  | { readonly kind: 'dir'; readonly real: string; readonly anchor: string | undefined }
  | { readonly kind: 'file'; readonly real: string };

/**
 * Resolves one symlink under the policy.
 *
 * @param link absolute path of the link as the walk reached it (for diagnostics).
 * @param linkReal the link's own path with its directory resolved (what `realpath` is asked about).
 * @returns the target, or a warning diagnostic saying why it is not followed.
 */
export function resolveLink(link: string, linkReal: string, context: LinkContext): LinkTarget | Diagnostic {
  if (context.policy === 'skip') return symlinkSkipped(link);
  let target: string;
  try {
    target = realpathSync(linkReal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return symlinkLoop(link, false);
    return symlinkDangling(link, `does not exist (${describeIoError(error)})`);
  }
  let anchor = context.anchor;
  const allowed = anchor === undefined ? context.allowedRealRoots : [anchor];
  const outside = context.policy === 'within' && !allowed.some((root) => isPathWithin(target, root));
  if (outside && (anchor !== undefined || context.insideSkill)) return symlinkOutside(link, anchor);
  let stat;
  try {
    stat = statSync(target);
  } catch (error) {
    return symlinkDangling(link, `cannot be read (${describeIoError(error)})`);
  }
  const isDir = stat.isDirectory();
  if (outside) {
    if (!isDir || !holdsManifest(target)) return symlinkOutside(link, anchor);
    anchor = target;
  } else if (!isDir && !stat.isFile()) {
    return specialFile(link);
  }
  if (!isDir) return { kind: 'file', real: target };
  if (context.ancestors.has(target)) return symlinkLoop(link, true);
  return { kind: 'dir', real: target, anchor };
}

/** Whether a directory holds a regular file named `SKILL.md`. */
function holdsManifest(dir: string): boolean {
  try {
    return statSync(path.join(dir, MANIFEST_NAME)).isFile();
  } catch {
    return false;
  }
}

/** Whether a value returned by {@link resolveLink} is a diagnostic. */
export function isDiagnostic(value: LinkTarget | Diagnostic): value is Diagnostic {
  return 'severity' in value;
}
