/**
 * Root arguments: every form a root is written in, parsed in one place (docs/ARCHITECTURE.md, "Sources"). Each
 * registered kind (`kinds.ts`) is offered the argument in turn: `git+<url>#<ref>:<subdir>` and `github:owner/repo…`
 * are git roots (`git/spec.ts`), anything else a folder, `dir` or `prefix=dir` (`folder/kind.ts`). Parsing is pure;
 * {@link resolveSources} also checks what can be checked before starting (each folder is a directory).
 */
import { SkillsServeError } from '../errors.js';
import { kindOf, ROOT_KINDS, type SourceSpec } from './kinds.js';

/**
 * Parses one root argument.
 *
 * @param arg the argument as typed.
 * @param cwd directory relative folder paths are resolved against.
 * @returns the source it names.
 * @throws RangeError with a message naming the accepted forms; URL credentials are never repeated in it.
 */
export function parseSourceArg(arg: string, cwd: string): SourceSpec {
  for (const kind of ROOT_KINDS) {
    const spec = kind.parse(arg, cwd);
    if (spec !== undefined) return spec;
  }
  // The folder kind, last, takes every argument.
  throw new RangeError(`root "${arg}" is of no known kind`);
}

/**
 * Resolves root arguments: each parsed ({@link parseSourceArg}) and checked by its kind (a folder must be a
 * directory; a git root is checked for form only, and fetched when the server or command starts).
 *
 * @param args root arguments as typed.
 * @returns the sources, in order.
 * @throws SkillsServeError `ROOT_UNUSABLE` naming the resolved absolute path of the first folder that is missing or
 *   not a directory; `CONFIG_INVALID` for a malformed argument.
 */
export function resolveSources(args: readonly string[], cwd: string): SourceSpec[] {
  return args.map((arg) => {
    let source: SourceSpec;
    try {
      source = parseSourceArg(arg, cwd);
    } catch (error) {
      throw new SkillsServeError('CONFIG_INVALID', (error as Error).message);
    }
    kindOf(source).check?.(source, arg);
    return source;
  });
}

/**
 * A source as people read it in logs: a folder's absolute path, or `git+<url without credentials>#<ref>:<subdir>`
 * (with the `prefix=` it was given).
 */
export function describeSource(source: SourceSpec): string {
  return kindOf(source).describe(source);
}
