/**
 * What `resources/list` lists (`--resources`): every served file (the default), or each skill's `SKILL.md`, in URI
 * order, in pages of `--page-size` (a 400-skill catalog is 1,119 resources and 300 KB in one page otherwise). Worked
 * out once per snapshot (and view).
 */
import type { Resource } from '@modelcontextprotocol/server';

import type { ResourceListMode } from '../config.js';
import { collapseWhitespace } from '../hosts/catalog.js';
import { mimeTypeFor } from '../index/mime.js';
import { DirNode, type SkillRecord, type Snapshot } from '../index/types.js';
import { buildSkillUri, compareUris, encodeSegment } from '../index/uri.js';
import { PerSnapshot } from './per-snapshot.js';

const lists = new PerSnapshot<readonly Resource[], ResourceListMode>();

/**
 * Every resource `resources/list` names for `snapshot`, in URI order.
 *
 * @param snapshot the snapshot as the client's view sees it.
 * @param mode `--resources`.
 */
export function listedResources(snapshot: Snapshot, mode: ResourceListMode): readonly Resource[] {
  return lists.get(snapshot, mode, () => (mode === 'skills' ? listManifests(snapshot) : listFiles(snapshot)));
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
