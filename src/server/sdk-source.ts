/**
 * The `SkillSource` the SDK's `SkillsExtension` is built over: it declares the capability and the `skill://{+path}`
 * resource template from it; the compat tools and prompts read through it. The extension's own methods, and
 * `resources/list`, are answered by `skills-handlers.ts`, which replaces them on every server
 * (SEP-2640 "skills/list", "skills/get", "resources/read", "resources/directory/read").
 */
import type { Skill, SkillSource } from '@modelcontextprotocol/server/ext/skills';

import { entryOf } from '../index/entry.js';
import { findDirectory, findSkill, listDirectory, pageOf } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { FileReader } from './read.js';
import { recorderOf, recordFileRead } from './usage.js';

/**
 * Builds the source over `store`.
 *
 * @param reader the verified reads `resources/read` serves.
 * @returns a `SkillSource`; `read` returns `undefined` for anything that is not a served file.
 */
export function createSkillSource(store: SnapshotStore, pageSize: number, reader: FileReader): SkillSource {
  return {
    async list({ cursor }) {
      const page = pageOf((await store.ready()).ordered, cursor, pageSize, (skill) => skill.uri);
      const skills = page.items.map((skill) => entryOf(skill) as Skill);
      return page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor };
    },
    async get(uri) {
      const skill = findSkill(await store.ready(), uri);
      return skill === undefined ? undefined : (entryOf(skill) as Skill);
    },
    async read(uri, ctx) {
      const read = await reader.read(uri);
      if (read.kind !== 'file') return undefined;
      // The compat tools and prompts read through here: `read_skill`, `read_skill_file`, a skill's prompt.
      recordFileRead(recorderOf(ctx), read.snapshot, read.file);
      return read.text === undefined
        ? { bytes: read.bytes, mimeType: read.mimeType }
        : { text: read.text, mimeType: read.mimeType };
    },
    async readDirectory(uri, { cursor }) {
      const directory = findDirectory(await store.ready(), uri);
      if (directory === undefined) return undefined;
      const page = pageOf(listDirectory(directory), cursor, pageSize, (child) => child.uri);
      const listed = page.items.map((child) => ({ ...child }));
      return page.nextCursor === undefined ? { resources: listed } : { resources: listed, nextCursor: page.nextCursor };
    },
  };
}
