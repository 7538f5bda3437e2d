/**
 * The `SkillSource` the SDK's `SkillsExtension` is built over: it declares the capability and the `skill://{+path}`
 * resource template, and answers `resources/list` from it; the compat tools and prompts read through it too. The
 * extension's own methods are answered by `skills-handlers.ts`, which replaces them on every server
 * (SEP-2640 "skills/list", "skills/get", "resources/read", "resources/directory/read").
 */
import type { Resource } from '@modelcontextprotocol/server';
import type { Skill, SkillSource } from '@modelcontextprotocol/server/ext/skills';

import type { ResourceListMode } from '../config.js';
import { entryOf } from '../index/entry.js';
import { mimeTypeFor } from '../index/mime.js';
import { findDirectory, findSkill, listDirectory, pageOf } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import { DirNode, type SkillRecord, type Snapshot } from '../index/types.js';
import { buildSkillUri, compareUris, encodeSegment } from '../index/uri.js';
import { collapseWhitespace } from './compat/catalog.js';
import type { FileReader } from './read.js';

/**
 * Builds the source over `store`.
 *
 * @param reader the verified reads `resources/read` serves.
 * @param resources what `resources/list` lists (`--resources`, default `files`).
 * @returns a `SkillSource`; `read` returns `undefined` for anything that is not a served file.
 */
export function createSkillSource(
  store: SnapshotStore,
  pageSize: number,
  reader: FileReader,
  resources: ResourceListMode = 'files',
): SkillSource {
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
    async read(uri) {
      const read = await reader.read(uri);
      if (read.kind !== 'file') return undefined;
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
    async listResources() {
      const snapshot = await store.ready();
      return resources === 'skills' ? listManifests(snapshot) : listFiles(snapshot);
    },
  };
}

/**
 * `resources/list` in `--resources skills`: one resource per served `SKILL.md`, named after its skill, with the
 * frontmatter description on one line (hosts show it in pickers).
 */
function listManifests(snapshot: Snapshot): Resource[] {
  return snapshot.ordered.map(manifestResource);
}

function manifestResource(skill: SkillRecord): Resource {
  return {
    uri: skill.uri,
    name: skill.name,
    description: collapseWhitespace(skill.description),
    mimeType: 'text/markdown',
    size: skill.manifestSize,
  };
}

/**
 * `resources/list` in `--resources files` (the default): every served file once, in URI order, so that hosts which
 * resolve `@` mentions only from this list (Gemini CLI) reach supporting files too. A `SKILL.md` keeps its skill's
 * name and description; any other file is named by the innermost skill holding it and its path in that skill
 * (`report-writer/templates/report.md`).
 */
function listFiles(snapshot: Snapshot): Resource[] {
  const listed: Resource[] = [];
  const visit = (dir: DirNode, uri: string, owner: SkillRecord | undefined, inSkill: string): void => {
    const skill = dir.skill ?? owner;
    const base = dir.skill === undefined ? inSkill : '';
    for (const child of dir.children) {
      const childUri = `${uri}/${encodeSegment(child.name)}`;
      const childPath = base === '' ? child.name : `${base}/${child.name}`;
      if (child instanceof DirNode) visit(child, childUri, skill, childPath);
      else if (skill === undefined) continue;
      else if (dir.skill !== undefined && child.name === 'SKILL.md') listed.push(manifestResource(dir.skill));
      else
        listed.push({
          uri: childUri,
          name: `${skill.name}/${childPath}`,
          mimeType: mimeTypeFor(child.name),
          size: child.size,
        });
    }
  };
  for (const child of snapshot.root.children) {
    if (child instanceof DirNode) visit(child, buildSkillUri([child.name]), undefined, child.name);
  }
  return listed.sort((a, b) => compareUris(a.uri, b.uri));
}
