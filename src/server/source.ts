/**
 * The `SkillSource` the SDK's `SkillsExtension` serves: every method reads the current snapshot once
 * (SEP-2640 "skills/list", "skills/get", "resources/read", "resources/directory/read"; DESIGN §3 `source.ts`).
 */
import { ProtocolError, ProtocolErrorCode, type Resource } from '@modelcontextprotocol/server';
import type { Skill, SkillReadResult, SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { rpcCodeOf, SkillsServeError } from '../errors.js';
import { entryOf } from '../index/entry.js';
import { findDirectory, findFile, findSkill, listDirectory, pageOf, type ServedFile } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { Snapshot } from '../index/types.js';
import { decodeLossless, readVerified } from './read.js';

/** What the source needs from the rest of the server. */
export interface SourceContext {
  readonly store: SnapshotStore;
  readonly pageSize: number;
  /**
   * Re-indexes after a read found a file that no longer matches its entry; resolves once the new snapshot is
   * current (and hosts have been notified).
   */
  readonly reindex: (file: ServedFile) => Promise<void>;
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
      const page = mapDomainErrors(() => pageOf(snapshot.ordered, cursor, pageSize, (skill) => skill.uri));
      const skills = page.items.map((skill) => entryOf(skill) as Skill);
      return page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor };
    },
    async get(uri) {
      const skill = findSkill(await store.ready(), uri);
      return skill === undefined ? undefined : (entryOf(skill) as Skill);
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
      const directory = findDirectory(snapshot, uri);
      if (directory === undefined) {
        if (findFile(snapshot, uri) !== undefined) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri} is a file, not a directory; use resources/read`);
        }
        return undefined;
      }
      const children = listDirectory(directory);
      const page = mapDomainErrors(() => pageOf(children, cursor, pageSize, (child) => child.uri));
      const resources = page.items.map((child) => ({ ...child }) as Resource);
      return page.nextCursor === undefined ? { resources } : { resources, nextCursor: page.nextCursor };
    },
    async listResources() {
      return listManifests(await store.ready());
    },
  };
}

/** `resources/list`: one resource per served `SKILL.md`, with name and description from the frontmatter. */
function listManifests(snapshot: Snapshot): Resource[] {
  return snapshot.ordered.map((skill) => ({
    uri: skill.uri,
    name: skill.name,
    description: skill.description,
    mimeType: 'text/markdown',
    size: skill.manifestSize,
  }));
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
