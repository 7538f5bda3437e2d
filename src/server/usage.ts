/**
 * What a request served, told to the transport that serves it (docs/ARCHITECTURE.md, "Operating"): the HTTP access
 * log and the per-skill read counters of `/metrics`. The transport hands each request a {@link ReadRecorder} as the
 * SDK's pass-through `AuthInfo` (`extra[READ_RECORDER]`), which reaches every handler's context; stdio hands none, so
 * nothing is recorded there (a stdio server has no `/metrics`, and its stderr is the host's error log).
 */
import { digestOf } from '../index/record.js';
import { findFile, type ServedFile } from '../index/snapshot.js';
import type { SkillRecord, Snapshot } from '../index/types.js';

/** One thing a request served. */
export interface ServedRead {
  /** The canonical URI served: the file read, or the `SKILL.md` URI of the entry `skills/get` answered. */
  readonly uri: string;
  /** The digest of what was served (`sha256:…`): the file's, or for an entry its `SKILL.md`'s. */
  readonly digest: string;
  /** The nearest skill holding it (for `SKILL.md`, that skill). */
  readonly skill: SkillRecord;
  /**
   * Whether the skill's `SKILL.md` content reached the client (`resources/read` of it, the `read_skill` tool, a skill's
   * prompt): what the per-skill read counters count. An entry (`skills/get`) is not: it holds no instructions.
   */
  readonly skillMd: boolean;
}

/** Told what each request served. */
export interface ReadRecorder {
  served(read: ServedRead): void;
}

/** The key of the recorder in the request's `AuthInfo.extra`. */
export const READ_RECORDER = 'dev.skills-serve/reads';

/** The recorder a handler's context carries (`ctx.http.authInfo.extra`), if any. */
export function recorderOf(ctx: { http?: { authInfo?: { extra?: Record<string, unknown> } } } | undefined) {
  return ctx?.http?.authInfo?.extra?.[READ_RECORDER] as ReadRecorder | undefined;
}

/**
 * Tells `recorder` that `file` was read (verified against `snapshot`).
 *
 * @param file the served file, as the read found it.
 */
export function recordFileRead(recorder: ReadRecorder | undefined, snapshot: Snapshot, file: ServedFile): void {
  if (recorder === undefined) return;
  const skill = nearestSkill(snapshot, file);
  recorder.served({ uri: file.uri, digest: digestOf(file.node), skill, skillMd: skill.uri === file.uri });
}

/** Tells `recorder` that the entry of `skill` was answered (`skills/get`). */
export function recordEntry(recorder: ReadRecorder | undefined, snapshot: Snapshot, skill: SkillRecord): void {
  if (recorder === undefined) return;
  const manifest = findFile(snapshot, skill.uri);
  if (manifest !== undefined)
    recorder.served({ uri: skill.uri, digest: digestOf(manifest.node), skill, skillMd: false });
}

/** The innermost skill whose directory holds `file` (a nested skill's, else its top skill's). */
function nearestSkill(snapshot: Snapshot, file: ServedFile): SkillRecord {
  const top = file.top;
  for (let end = file.uri.lastIndexOf('/'); end > top.rootUri.length; end = file.uri.lastIndexOf('/', end - 1)) {
    const skill = snapshot.skills.get(`${file.uri.slice(0, end)}/SKILL.md`);
    if (skill !== undefined) return skill;
  }
  return top;
}
