/**
 * The first drafts' discovery index: the well-known resource `skill://index.json` that the April 2026 reference host
 * prototypes of the Skills extension read to find a server's skills (docs/hosts/prototypes.md, "Hosts that read
 * skill://index.json"), in the Agent Skills discovery format 0.2.0: `{ "$schema", "skills": [{ name, type:
 * "skill-md", description, url, digest }] }`, one entry per served skill, in `skills/list` order, `url` being its
 * `SKILL.md` URI. It is not a skill nor a file of one: `skills/list`, `resources/list` and directory listings never
 * name it.
 *
 * The prototypes refuse an index over {@link INDEX_MAX_BYTES} and a `SKILL.md` over {@link INDEX_MAX_MANIFEST_BYTES},
 * and keep the first of two skills with one name (compared case-insensitively): what {@link DiscoveryIndex.kept}
 * holds, and what the compat surfaces leave out for a connection that read the index.
 */
import { discoveryIndexText } from '../feed/feed.js';
import { findChild } from '../index/namespace.js';
import { digestOf } from '../index/record.js';
import { FileNode, type SkillRecord, type Snapshot } from '../index/types.js';
import { PerSnapshot } from './per-snapshot.js';

/** The URI the prototypes read. */
export const INDEX_URI = 'skill://index.json';

/** Most bytes of index a prototype parses (fast-agent's bound): later skills are left out of a longer one. */
export const INDEX_MAX_BYTES = 1_048_576;

/** Largest `SKILL.md` a prototype loads (bytes; both prototypes' bound). */
export const INDEX_MAX_MANIFEST_BYTES = 256 * 1024;

/** The index of one snapshot (as one view sees it). */
export interface DiscoveryIndex {
  /** The JSON text, at most {@link INDEX_MAX_BYTES} bytes of UTF-8. */
  readonly text: string;
  /** The `SKILL.md` URIs of the entries a prototype keeps. */
  readonly kept: ReadonlySet<string>;
}

const indexes = new PerSnapshot<DiscoveryIndex>();

/**
 * The index of `snapshot`, worked out once per snapshot, serialized by the discovery feed's code
 * (`feed/feed.ts` {@link discoveryIndexText}).
 *
 * @param snapshot the snapshot as the client's view sees it.
 */
export function discoveryIndex(snapshot: Snapshot): DiscoveryIndex {
  return indexes.get(snapshot, undefined, () => {
    const { text, count } = discoveryIndexText(
      snapshot.ordered.map((skill) => ({
        name: skill.name,
        type: 'skill-md' as const,
        description: skill.description,
        url: skill.uri,
        digest: manifestDigest(skill),
      })),
      INDEX_MAX_BYTES,
    );
    const kept = new Set<string>();
    const names = new Set<string>();
    for (const skill of snapshot.ordered.slice(0, count)) {
      const name = skill.name.toLowerCase();
      if (!names.has(name) && skill.manifestSize <= INDEX_MAX_MANIFEST_BYTES) kept.add(skill.uri);
      names.add(name);
    }
    return { text, kept };
  });
}

function manifestDigest(skill: SkillRecord): string {
  const manifest = findChild(skill.node, 'SKILL.md');
  return manifest instanceof FileNode ? digestOf(manifest) : '';
}
