/**
 * Data shapes of the skill index (data only, no behaviour). See docs/ARCHITECTURE.md, "The index".
 *
 * Vocabulary follows the Skills extension (SEP-2640, stable text): a *skill path* is the `/`-separated directory path
 * that names a skill under `skill://`; an *entry* is the object `skills/list` and `skills/get` serve; *resources* are
 * the entry's `{ uri, digest, size }` file list; a *directory resource* is any directory inside the served namespace.
 *
 * Memory is paid per file, so a file is one small {@link FileNode} whose `key` string holds its digest and the
 * identity it had when hashed (the node is also the digest cache), and path segments are stored once, as node names.
 */
import type { SkillFrontmatter } from '@modelcontextprotocol/server/ext/skills';

/** Why a file of a skill is flagged as executable content (`executables.ts`). */
export type ExecutableReason = 'scripts' | 'execute-bit' | 'shebang' | 'elf' | 'mach-o' | 'pe';

/** A flagged file of a skill: its path below the skill's directory (`/`-separated, decoded) and why. */
export interface ExecutableFile {
  readonly path: string;
  readonly reasons: readonly ExecutableReason[];
}

/** A served entry with `resources` always an array (this server never serves `"dynamic"` skills). */
export interface SkillEntry {
  readonly uri: string;
  readonly frontmatter: SkillFrontmatter;
  readonly resources: readonly { readonly uri: string; readonly digest: string; readonly size: number }[];
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** One directory given on the command line. `prefix` are skill-path segments it is mounted under (may be empty). */
export interface RootSpec {
  /** Absolute path as resolved from the command line (may be, or contain, symlinks). */
  readonly dir: string;
  /** Organizational prefix segments (`acme/billing=./dir` gives `['acme', 'billing']`). */
  readonly prefix: readonly string[];
  /** `_meta` of every entry of this root (a git root's provenance), if any. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** The version of the root this directory holds (a git root's commit id), if it has one: for the access log. */
  readonly version?: string;
}

/**
 * A served file. Immutable once published; shared by every skill that contains it (nested skills share files) and by
 * every snapshot until the file changes.
 */
export class FileNode {
  /**
   * @param name the file name (one path segment, decoded).
   * @param size bytes that were hashed.
   * @param key digest, identity and flags as one latin1 string: the raw digest, then size, mtime, ctime, inode and
   *   device, then a flags byte (see `record.ts`).
   * @param real absolute real path, only when it is not the parent directory's real path + `/` + `name` (the file was
   *   reached through a symlink); otherwise `undefined`.
   */
  constructor(
    readonly name: string,
    readonly size: number,
    readonly key: string,
    readonly real: string | undefined,
  ) {}
}

/**
 * A directory inside the served namespace: a skill directory, a directory inside one, or a grouping directory above
 * skills (`skill://acme` for `acme/billing/refunds`). Immutable once published.
 */
export class DirNode {
  /**
   * @param name the directory name (one path segment, decoded); `''` for the namespace root.
   * @param children files and subdirectories sorted by name (code-unit order).
   * @param real absolute real path when it is not the parent's real path + `/` + `name` (a root, a skill reached
   *   through a link, a followed link); grouping directories have none.
   * @param skill the skill whose directory this is, if any (nested skills' directories have theirs too).
   */
  constructor(
    readonly name: string,
    readonly children: readonly (DirNode | FileNode)[],
    readonly real: string | undefined,
    readonly skill: SkillRecord | undefined,
  ) {}
}

/** A served skill: its serialized entry plus what the server needs to answer about it. Immutable. */
export interface SkillRecord {
  /** The `SKILL.md` URI: the entry's `uri` and the key everywhere. */
  readonly uri: string;
  /** Directory URI (`skill://acme/billing/refunds`, no trailing slash). */
  readonly rootUri: string;
  /** Skill path segments, decoded (`['acme', 'billing', 'refunds']`). */
  readonly segments: readonly string[];
  /** Frontmatter `name` and `description`. */
  readonly name: string;
  readonly description: string;
  /** `JSON.stringify` of the entry `{ uri, frontmatter, resources }`: built, validated and serialized once. */
  readonly json: string;
  /** The skill's directory (its files are the subtree). */
  readonly node: DirNode;
  /** Absolute real path of the skill's directory. */
  readonly dirReal: string;
  /** Index of the root (in `Config.roots`) that published it, and the directory's root-relative path. */
  readonly rootIndex: number;
  readonly rel: string;
  /** The version of the root it was published from (`RootSpec.version`: a git root's commit), if any. */
  readonly version?: string | undefined;
  /** Byte size of `SKILL.md`, its number of resources and their total bytes. */
  readonly manifestSize: number;
  readonly fileCount: number;
  readonly totalBytes: number;
  /**
   * Its files a model could be told to run, each with why (`executables.ts`), sorted by path; empty for most skills.
   * The entry's `_meta["dev.skills-serve/executables"]` says the same.
   */
  readonly executables: readonly ExecutableFile[];
  /** The `# …` headings of `SKILL.md`'s body, one per line, for search. */
  readonly headings: string;
  /**
   * Whether a model may load the skill on its own: false for frontmatter `disable-model-invocation: true` (as hosts
   * read it: the skill is the user's to invoke, and no model-facing list names it).
   */
  readonly modelInvocable: boolean;
  /** Whether a user may invoke it by name: false for frontmatter `user-invocable: false` (no slash command). */
  readonly userInvocable: boolean;
}

/** A child in a directory resource listing (`resources/directory/read`). */
export interface DirectoryChild {
  readonly uri: string;
  readonly name: string;
  readonly mimeType: string;
  /** Present for files only. */
  readonly size?: number;
}

/**
 * Severity: `error` means a skill was left out; `warning` means one file or link was skipped, or a finding; `info` is
 * a fact for the operator (a skill bundles executables, or was withheld for it): never a failure, `--strict` included.
 */
export type DiagnosticSeverity = 'error' | 'warning' | 'info';

/** One problem found while indexing, reported once on stderr (and by `check`). */
export interface Diagnostic {
  readonly severity: DiagnosticSeverity;
  /** Stable rule id (see `diagnostics.ts`; a skill breaking several rules joins them with `,`). */
  readonly rule: string;
  /** Absolute host path of the file or directory concerned. Never sent on the wire as is. */
  readonly file: string;
  /** 1-based line in `file`, when known. */
  readonly line?: number;
  /** 1-based column in that line, when known. */
  readonly column?: number;
  /** What is wrong, in one sentence. */
  readonly message: string;
  /** How to fix it. */
  readonly hint: string;
  /** `root-unusable`: the errno code the root met (`ENOENT`, `EACCES`). */
  readonly code?: string;
  /** `skill-path-conflict`: the skill path that won (listed in an earlier root). */
  readonly winner?: string;
}

/** One immutable view of everything served. Requests read the current snapshot once. */
export interface Snapshot {
  /** Served skills by `SKILL.md` URI. */
  readonly skills: ReadonlyMap<string, SkillRecord>;
  /** Served skills sorted by `SKILL.md` URI (code-unit order): the `skills/list` order. */
  readonly ordered: readonly SkillRecord[];
  /** The namespace: its children are the first segments of every skill path. */
  readonly root: DirNode;
  /** Number of distinct served files. */
  readonly fileCount: number;
  /** Diagnostics of the build that produced this snapshot, in a stable order. */
  readonly diagnostics: readonly Diagnostic[];
  /** Monotonic build number (1 for the first build, 0 for the empty snapshot before it). */
  readonly generation: number;
}
