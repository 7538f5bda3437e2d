/**
 * What a snapshot says, as the index integration tests read it: its skills, the URIs of its files and directory
 * resources, listings and diagnostics; and the check that every entry agrees with the disk oracle (`disk.ts`).
 */
import { promises as fsp } from 'node:fs';

import { expect } from 'vitest';

import { buildSnapshot } from '../../src/index/build.js';
import { entryOf } from '../../src/index/entry.js';
import { findDirectory, findFile, listDirectory } from '../../src/index/snapshot.js';
import {
  type Diagnostic,
  type DirectoryChild,
  DirNode,
  type SkillRecord,
  type Snapshot,
} from '../../src/index/types.js';
import { buildSkillUri, encodeSegment } from '../../src/index/uri.js';
import { fileOnDisk, type PublishedFile } from '../helpers/disk.js';

/** Builds generation 1 of a single root mounted without a prefix. */
export function buildOne(dir: string): Promise<Snapshot> {
  return buildSnapshot([{ dir, prefix: [] }]);
}

/** The entry's `resources` as an array (fails the test on `"dynamic"`). */
export function resourcesOf(skill: SkillRecord | undefined): PublishedFile[] {
  expect(skill).toBeDefined();
  const resources = skill === undefined ? undefined : entryOf(skill).resources;
  expect(Array.isArray(resources)).toBe(true);
  return [...(resources as PublishedFile[])];
}

/** `skill://` URIs of the served skills, in `skills/list` order. */
export function skillUris(snapshot: Snapshot): string[] {
  return snapshot.ordered.map((skill) => skill.uri);
}

/** Code-unit order (the order of entries, listings and cursors). */
export const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** URIs of every file some served entry lists (the union of every entry's `resources`), sorted by code unit. */
export function servedFileUris(snapshot: Snapshot): string[] {
  const uris = new Set<string>();
  for (const skill of snapshot.ordered) for (const resource of resourcesOf(skill)) uris.add(resource.uri);
  return [...uris].sort(byCodeUnit);
}

/** Walks the namespace tree: every directory and file in it with its URI (the root's children are URI authorities). */
function walkNamespace(snapshot: Snapshot, visit: (uri: string, isDirectory: boolean) => void): void {
  const walk = (node: DirNode, uri: string | undefined): void => {
    for (const child of node.children) {
      const childUri = uri === undefined ? buildSkillUri([child.name]) : `${uri}/${encodeSegment(child.name)}`;
      visit(childUri, child instanceof DirNode);
      if (child instanceof DirNode) walk(child, childUri);
    }
  };
  walk(snapshot.root, undefined);
}

/** URIs of every directory resource: every directory of the namespace, grouping directories included; sorted. */
export function directoryUris(snapshot: Snapshot): string[] {
  const uris: string[] = [];
  walkNamespace(snapshot, (uri, isDirectory) => {
    if (isDirectory) uris.push(uri);
  });
  return uris.sort(byCodeUnit);
}

/** URIs of every file in the namespace (what `resources/read` can open), sorted. */
export function namespaceFileUris(snapshot: Snapshot): string[] {
  const uris: string[] = [];
  walkNamespace(snapshot, (uri, isDirectory) => {
    if (!isDirectory) uris.push(uri);
  });
  return uris.sort(byCodeUnit);
}

/**
 * The listing of the directory resource at `uri` (any spelling), as `resources/directory/read` gives it; `undefined`
 * when there is none.
 */
export function childrenOf(snapshot: Snapshot, uri: string): DirectoryChild[] | undefined {
  const directory = findDirectory(snapshot, uri);
  return directory === undefined ? undefined : listDirectory(directory);
}

/**
 * `SKILL.md` URIs of the served skills whose entry lists the file at `uri` (the nearest skill and every enclosing one).
 */
export function skillsListing(snapshot: Snapshot, uri: string): string[] {
  return snapshot.ordered
    .filter((skill) => resourcesOf(skill).some((resource) => resource.uri === uri))
    .map((skill) => skill.uri);
}

/**
 * Checks that the files of the namespace are exactly the files the entries list, counted once each, and that every
 * resource of every entry is a served file whose host path holds exactly the bytes the entry's digest and size
 * describe.
 */
export function expectSnapshotMatchesDisk(snapshot: Snapshot): void {
  const served = servedFileUris(snapshot);
  expect(namespaceFileUris(snapshot)).toEqual(served);
  expect(snapshot.fileCount).toBe(served.length);
  for (const skill of snapshot.ordered) {
    for (const resource of resourcesOf(skill)) {
      const file = findFile(snapshot, resource.uri);
      expect(file, resource.uri).toBeDefined();
      expect({ ...fileOnDisk(file?.uri ?? '', file?.path ?? ''), nodeSize: file?.node.size }).toEqual({
        uri: resource.uri,
        digest: resource.digest,
        size: resource.size,
        nodeSize: resource.size,
      });
    }
  }
}

/** The parts of a diagnostic a test pins down exactly (message and hint are prose). */
export function diagKey(diagnostic: Diagnostic): { severity: string; rule: string; file: string; line?: number } {
  return {
    severity: diagnostic.severity,
    rule: diagnostic.rule,
    file: diagnostic.file,
    ...(diagnostic.line === undefined ? {} : { line: diagnostic.line }),
  };
}

/** Diagnostics of a snapshot as {@link diagKey}s, sorted by file then rule (build order is not specified). */
export function diagKeys(snapshot: Snapshot): ReturnType<typeof diagKey>[] {
  return snapshot.diagnostics
    .map(diagKey)
    .sort((a, b) => (a.file + a.rule < b.file + b.rule ? -1 : a.file + a.rule > b.file + b.rule ? 1 : 0));
}

/** 1-based number of the first line of `file` starting with `prefix`, read from disk (throws when absent). */
export async function lineStartingWith(file: string, prefix: string): Promise<number> {
  const lines = (await fsp.readFile(file, 'utf8')).split(/\r?\n/u);
  const index = lines.findIndex((line) => line.startsWith(prefix));
  if (index === -1) throw new Error(`no line starting with ${JSON.stringify(prefix)} in ${file}`);
  return index + 1;
}
