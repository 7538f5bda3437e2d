/**
 * Data shapes of the skill index (data only, no behaviour).
 *
 * Vocabulary follows the Skills extension (SEP-2640, stable text): a *skill path* is the `/`-separated
 * directory path that names a skill under `skill://`; an *entry* is the `Skill` object served by
 * `skills/list` and `skills/get`; *resources* are the entry's `{ uri, digest, size }` file list.
 */
import type { Skill as WireSkill } from '@modelcontextprotocol/server/ext/skills';

/** The entry exactly as sent on the wire (`uri`, `frontmatter`, `resources`), deeply frozen. */
export type SkillEntry = WireSkill;

/** One directory given on the command line. `prefix` are skill-path segments it is mounted under (may be empty). */
export interface RootSpec {
  /** Absolute path as resolved from the command line (may contain symlinks). */
  readonly dir: string;
  /** Organizational prefix segments (`acme/billing=./dir` gives `['acme', 'billing']`). */
  readonly prefix: readonly string[];
}

/** A file the index serves, shared by every skill that contains it (nested skills share files). */
export interface FileRecord {
  /** Canonical `skill://` URI of the file. */
  readonly uri: string;
  /** Absolute host path through which the file is read (its real path, inside a root). */
  readonly path: string;
  /** File name (last segment), for directory listings. */
  readonly name: string;
  /** `sha256:` + 64 lowercase hex digits of the bytes. */
  readonly digest: string;
  /** Byte length. */
  readonly size: number;
  /** Modification time in ms since the epoch, as seen when hashed. */
  readonly mtimeMs: number;
  /** Change time in ms since the epoch, as seen when hashed. */
  readonly ctimeMs: number;
  /** Inode and device numbers, as seen when hashed. */
  readonly ino: number;
  readonly dev: number;
  /** MIME type from the file extension. */
  readonly mimeType: string;
  /** Index of the root (in `Config.roots`) and root-relative path (`/`-separated) the file was found at. */
  readonly rootIndex: number;
  readonly rel: string;
}

/** A served skill: its wire entry plus what the server needs to answer about it. */
export interface SkillRecord {
  /** The wire entry (frozen). `entry.uri` is the `SKILL.md` URI and the map key everywhere. */
  readonly entry: SkillEntry;
  /** Skill path segments, decoded (`['acme', 'billing', 'refunds']`). */
  readonly segments: readonly string[];
  /** Directory URI (`skill://acme/billing/refunds`, no trailing slash). */
  readonly rootUri: string;
  /** Absolute host directory of the skill. */
  readonly dir: string;
  /** Index of the root (in `Config.roots`) that published it. */
  readonly rootIndex: number;
  readonly name: string;
  readonly description: string;
  /** Byte size of `SKILL.md`. */
  readonly manifestSize: number;
}

/** A child in a directory resource listing (`resources/directory/read`). */
export interface DirectoryChild {
  readonly uri: string;
  readonly name: string;
  readonly mimeType: string;
  /** Present for files only. */
  readonly size?: number;
}

/** Severity: `error` means a skill was left out; `warning` means one file or link was skipped. */
export type DiagnosticSeverity = 'error' | 'warning';

/** One problem found while indexing, reported once on stderr (and by `check`). */
export interface Diagnostic {
  readonly severity: DiagnosticSeverity;
  /** Stable rule id (`description-length`, `symlink-outside-root`, …). */
  readonly rule: string;
  /** Absolute host path of the file or directory concerned. Never sent on the wire. */
  readonly file: string;
  /** 1-based line in `file`, when known. */
  readonly line?: number;
  /** 1-based column in that line, when known. */
  readonly column?: number;
  /** What is wrong, in one sentence. */
  readonly message: string;
  /** How to fix it. */
  readonly hint: string;
}

/** One immutable view of everything served. Requests read the current snapshot once. */
export interface Snapshot {
  /** Served skills by `SKILL.md` URI. */
  readonly skills: ReadonlyMap<string, SkillRecord>;
  /** Served skills sorted by `SKILL.md` URI (code-unit order): the `skills/list` order. */
  readonly ordered: readonly SkillRecord[];
  /** Every served file by URI. */
  readonly files: ReadonlyMap<string, FileRecord>;
  /** Every directory resource (skill roots, their subdirectories, grouping directories) → sorted children. */
  readonly dirs: ReadonlyMap<string, readonly DirectoryChild[]>;
  /** Diagnostics of the build that produced this snapshot. */
  readonly diagnostics: readonly Diagnostic[];
  /** Monotonic build number (1 for the first build). */
  readonly generation: number;
}
