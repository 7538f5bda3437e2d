/**
 * The `SkillSource` the SDK's `SkillsExtension` serves: every method reads the current snapshot once
 * (SEP-2640 "skills/list", "skills/get", "resources/read", "resources/directory/read"; DESIGN §3 `source.ts`).
 */
import { ProtocolError, ProtocolErrorCode, type Resource } from '@modelcontextprotocol/server';
import type { SkillReadResult, SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { ResourceListMode } from '../config.js';
import { rpcCodeOf, SkillsServeError } from '../errors.js';
import { findDirectory, findFile, findSkill, pageOf } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { FileRecord, SkillRecord, Snapshot } from '../index/types.js';
import { collapseWhitespace } from './compat-catalog.js';
import { decodeLossless, readVerified } from './read.js';

/** What the source needs from the rest of the server. */
export interface SourceContext {
  readonly store: SnapshotStore;
  readonly pageSize: number;
  /** What `resources/list` lists (default `files`). */
  readonly resources?: ResourceListMode;
  /**
   * Re-indexes after a read found a file that no longer matches its entry; resolves once the new snapshot is
   * current (and hosts have been notified).
   */
  readonly reindex: (file: FileRecord) => Promise<void>;
  /** Logs a read failure (message without host paths; `path` for the log only). */
  readonly warn: (message: string, path: string) => void;
}

/** How many times a read re-indexes and retries a file that keeps changing before giving up. */
const MAX_STALE_RETRIES = 3;

/**
 * Builds the source over `context.store`.
 *
 * @returns a `SkillSource` whose methods throw `ProtocolError` -32602 for bad cursors and non-directories, and
 *   -32603 when a file cannot be read.
 */
export function createSkillSource(context: SourceContext): SkillSource {
  const { store, pageSize } = context;
  return {
    async list({ cursor }) {
      const snapshot = await store.ready();
      const page = mapDomainErrors(() => pageOf(snapshot.ordered, cursor, pageSize, (skill) => skill.entry.uri));
      const skills = page.items.map((skill) => skill.entry);
      return page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor };
    },
    async get(uri) {
      return findSkill(await store.ready(), uri)?.entry;
    },
    async read(uri) {
      let snapshot = await store.ready();
      for (let attempt = 0; ; attempt++) {
        const file = findFile(snapshot, uri);
        if (file === undefined) {
          if (findDirectory(snapshot, uri) !== undefined) {
            throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri} is a directory; use resources/directory/read`);
          }
          return undefined;
        }
        const outcome = await readVerified(file);
        if (outcome.kind === 'ok') return toReadResult(outcome.bytes, file.mimeType);
        if (outcome.kind === 'error') {
          context.warn(`read failed: ${outcome.reason}`, file.path);
          throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} could not be read`);
        }
        if (attempt >= MAX_STALE_RETRIES) {
          throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} keeps changing on disk; try again`);
        }
        await context.reindex(file);
        snapshot = store.current;
      }
    },
    async readDirectory(uri, { cursor }) {
      const snapshot = await store.ready();
      const children = findDirectory(snapshot, uri);
      if (children === undefined) {
        if (findFile(snapshot, uri) !== undefined) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri} is a file, not a directory; use resources/read`);
        }
        return undefined;
      }
      const page = mapDomainErrors(() => pageOf(children, cursor, pageSize, (child) => child.uri));
      const resources = page.items.map((child) => ({ ...child }) as Resource);
      return page.nextCursor === undefined ? { resources } : { resources, nextCursor: page.nextCursor };
    },
    async listResources() {
      const snapshot = await store.ready();
      return context.resources === 'skills' ? listManifests(snapshot) : listFiles(snapshot);
    },
  };
}

/**
 * `resources/list` in `--resources skills`: one resource per served `SKILL.md`, named after its skill,
 * with the frontmatter description on one line (hosts show it in pickers).
 */
export function listManifests(snapshot: Snapshot): Resource[] {
  return snapshot.ordered.map(manifestResource);
}

function manifestResource(skill: SkillRecord): Resource {
  return { uri: skill.entry.uri, name: skill.name, description: collapseWhitespace(skill.description), mimeType: 'text/markdown', size: skill.manifestSize };
}

/**
 * `resources/list` in `--resources files` (the default): every served file in URI order, so that hosts which resolve `@` mentions
 * only from this list (Gemini CLI) reach supporting files too. A file is named by its skill's name and its path in
 * the skill (`report-writer/templates/report.md`; a file of nested skills by the innermost one); a `SKILL.md` keeps
 * its skill's name and description.
 */
export function listFiles(snapshot: Snapshot): Resource[] {
  const owners = new Map<string, SkillRecord>();
  for (const skill of snapshot.ordered) {
    for (const resource of typeof skill.entry.resources === 'string' ? [] : skill.entry.resources) {
      if (typeof resource === 'string') continue;
      const owner = owners.get(resource.uri);
      if (owner === undefined || owner.segments.length < skill.segments.length) owners.set(resource.uri, skill);
    }
  }
  const files = [...snapshot.files.values()].sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  return files.map((file) => {
    const manifestOf = snapshot.skills.get(file.uri);
    if (manifestOf !== undefined) return manifestResource(manifestOf);
    const owner = owners.get(file.uri);
    const name = owner === undefined ? file.name : `${owner.name}/${file.uri.slice(owner.rootUri.length + 1)}`;
    return { uri: file.uri, name: safeDecode(name), mimeType: file.mimeType, size: file.size };
  });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function toReadResult(bytes: Uint8Array, mimeType: string): SkillReadResult {
  const text = decodeLossless(bytes);
  return text === undefined ? { bytes, mimeType } : { text, mimeType };
}

/** Runs `action`, turning a {@link SkillsServeError} into the `ProtocolError` its code maps to. */
function mapDomainErrors<T>(action: () => T): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof SkillsServeError) throw new ProtocolError(rpcCodeOf(error.code), error.message);
    throw error;
  }
}
