/**
 * The Skills extension's methods, answered from the current snapshot with entries serialized once at build time
 * (SEP-2640 "skills/list", "skills/get", "resources/read", "resources/directory/read"; docs/ARCHITECTURE.md,
 * "Serving"). Installed on each connection's server after the SDK's `SkillsExtension.attach` (which declares the
 * capability and the `skill://{+path}` template): the results are those the extension would send, field for field
 * and in the same order, without re-validating every entry on every page.
 *
 * `resources/read` checks the URI exactly as the client sent it (the SDK's handler parses it with WHATWG `URL` first,
 * which resolves dot segments: `skill://s/references/../SKILL.md` would read `skill://s/SKILL.md`).
 */
import type { McpServer, ServerContext as RequestContext } from '@modelcontextprotocol/server';
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
} from '@modelcontextprotocol/server/ext/skills';

import type { ResourceListMode } from '../config.js';
import { asProtocolErrors, SkillsServeError } from '../errors.js';
import { EXTENSION_MAX_ENTRY_BYTES, EXTENSION_MAX_SKILLS } from '../hosts/profiles.js';
import { findDirectory, findFile, findSkill, listDirectory, pageOf } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { Snapshot } from '../index/types.js';
import { parseSkillUri } from '../index/uri.js';
import { DIAGNOSTICS_LOGGER, DIRECTORY_PARAMS, echo, type Era, LIST_PARAMS, URI_PARAMS } from '../wire/protocol.js';
import { Base64Blob, RawJson } from '../wire/raw-json.js';
import { logLevelOf, type PublicDiagnostic } from './diagnostics.js';
import { discoveryIndex, INDEX_URI } from './discovery-index.js';
import { PerSnapshot } from './per-snapshot.js';
import type { FileReader } from './read.js';
import { listedResources } from './resource-list.js';
import { type ReadRecorder, recordEntry, recorderOf, recordFileRead } from './usage.js';
import {
  isVisible,
  isWithheld,
  leadsToVisible,
  viewOf,
  type Visibility,
  visibleChildren,
  visibleSkills,
} from './visibility.js';

/** Cache hints of 2026-07-28 results (SEP-2640: `ttlMs` and `cacheScope` on `skills/list` and `skills/get`). */
export interface CacheHint {
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/**
 * `resultType: "complete"` on every `skills/list` and `skills/get` result, in both eras. SEP-2640 requires it on
 * 2026-07-28 results (where the SDK would add it anyway); 2025-era hosts may require it too: Microsoft Agent
 * Framework's `McpListedSkillsLoader` throws on a `skills/list` result without it (docs/hosts/agent-framework.md). It
 * comes last, after the cache hint, where the SDK's 2026-07-28 encoder puts it: those results are unchanged.
 */
const COMPLETE = { resultType: 'complete' } as const;

/** What the handlers serve from. */
export interface SkillsHandlerContext {
  readonly store: SnapshotStore;
  readonly pageSize: number;
  /** Verified reads (`read.ts`). */
  readonly reader: FileReader;
  /** The cache hint of 2026-07-28 results. */
  readonly cacheHint: () => CacheHint;
  /** What `resources/list` lists (`--resources`). */
  readonly resources: ResourceListMode;
  /** The client's view (`--http-tokens`); `undefined` sees everything. */
  readonly visibility?: Visibility | undefined;
  /** Told about an error no handler expected (logged with its stack; the client gets -32603 `Internal error`). */
  readonly onUnexpected: (error: unknown) => void;
  /**
   * Stateless HTTP only: the diagnostics this client may hear, sent as `notifications/message` (level `warning`,
   * logger `skills-serve`) on the response stream of each first `skills/list` page, before the result. Such a client
   * has no connection the server could push them to when they appear (stdio hosts get them pushed instead).
   */
  readonly diagnostics?: () => readonly PublicDiagnostic[];
}

/** Whether a request is the first page of `skills/list`, which stateless HTTP answers with the diagnostics first. */
export function announcesDiagnostics(method: SkillsMethod, params: { cursor?: unknown } | undefined): boolean {
  return method === SKILLS_LIST_METHOD && params?.cursor === undefined;
}

/** The four methods answered from the snapshot, by name. */
export const SKILLS_METHODS = [
  SKILLS_LIST_METHOD,
  SKILLS_GET_METHOD,
  RESOURCES_DIRECTORY_READ_METHOD,
  'resources/read',
  'resources/list',
] as const;
export type SkillsMethod = (typeof SKILLS_METHODS)[number];

/** Told what a connection's requests were answered, so that its compat offer follows what its host holds. */
export interface SkillsRequestObserver {
  /** A `skills/list` page or the discovery index is being answered; the call returned says it was. */
  listing(): () => void;
  /** A `skills/list` page: the first one (no cursor) or a later one, how many entries, whether it was the last. */
  page(first: boolean, entries: number, complete: boolean): void;
  /** The draft discovery index, with the `SKILL.md` URIs of the entries a prototype host keeps. */
  index(kept: ReadonlySet<string>): void;
}

/**
 * Answers one of {@link SKILLS_METHODS} (params already validated by the method's schema).
 *
 * @param era the connection's era: 2026-07-28 results carry the cache hint (`skills/list` and `skills/get` carry
 *   `resultType: "complete"` in both eras).
 * @param observer told what was answered (a connection's compat offer; none over stateless HTTP).
 * @param recorder told what a read or `skills/get` served (HTTP: the access log and the read counters).
 * @returns the result (entries and blobs as pre-serialized parts).
 * @throws SkillsServeError for an unknown skill, file or directory, a bad cursor or URI (-32602), and a file that
 *   cannot be read (-32603): the server's handlers map them through `errors.ts`.
 */
export async function answerSkillsMethod(
  method: SkillsMethod,
  params: { uri?: string; cursor?: string },
  era: Era,
  context: SkillsHandlerContext,
  observer?: SkillsRequestObserver,
  recorder?: ReadRecorder,
): Promise<Record<string, unknown>> {
  const { store, pageSize } = context;
  const cacheFields = (): Partial<CacheHint> => (era === 'modern' ? { ...context.cacheHint() } : {});
  const { uri = '', cursor } = params;
  const view = context.visibility;
  // The request's URI parsed once, when first needed (`skills/list` and `skills/get` never need it).
  let parsed: readonly string[] | undefined | null = null;
  const segments = (): readonly string[] | undefined => (parsed === null ? (parsed = parseSkillUri(uri)) : parsed);
  // What a view may not see is answered exactly as what does not exist (a skill it withholds included).
  const seen = (): boolean => {
    const at = view === undefined ? undefined : segments();
    return view === undefined || (at !== undefined && isVisible(view, at) && !isWithheld(store.current, view, at));
  };
  const onTheWay = (): boolean => {
    const at = view === undefined ? undefined : segments();
    return view === undefined || (at !== undefined && leadsToVisible(view, at) && !isWithheld(store.current, view, at));
  };
  switch (method) {
    case SKILLS_LIST_METHOD: {
      const answered = observer?.listing();
      try {
        const snapshot = await store.ready();
        const size = Math.min(pageSize, SKILLS_PAGE_MAX);
        const { skills, count, nextCursor } = listPage(snapshot, view, cursor, size);
        if (nextCursor !== undefined) listAhead(snapshot, view, nextCursor, size);
        observer?.page(cursor === undefined, count, nextCursor === undefined);
        return { skills, ...(nextCursor === undefined ? {} : { nextCursor }), ...cacheFields(), ...COMPLETE };
      } finally {
        answered?.();
      }
    }
    case SKILLS_GET_METHOD: {
      const snapshot = await store.ready();
      const skill = findSkill(snapshot, uri);
      if (
        skill === undefined ||
        (view !== undefined && (!isVisible(view, skill.segments) || isWithheld(snapshot, view, skill.segments)))
      ) {
        throw new SkillsServeError('SKILL_NOT_FOUND', `No skill is served at ${echo(uri)}`);
      }
      recordEntry(recorder, snapshot, skill);
      return { skill: new RawJson(skill.json), ...cacheFields(), ...COMPLETE };
    }
    case RESOURCES_DIRECTORY_READ_METHOD: {
      const snapshot = await store.ready();
      const directory = onTheWay() ? findDirectory(snapshot, uri) : undefined;
      // A directory found is at the request's segments (findDirectory parsed the same URI).
      const at = view === undefined ? undefined : segments();
      const children =
        directory === undefined
          ? undefined
          : view === undefined
            ? listDirectory(directory)
            : at === undefined
              ? undefined
              : visibleChildren(snapshot, view, at, listDirectory(directory));
      if (children === undefined) {
        const isFile = seen() && findFile(snapshot, uri) !== undefined;
        throw new SkillsServeError(
          'NOT_A_DIRECTORY',
          isFile
            ? `${echo(uri)} is a file, not a directory; use resources/read`
            : `${echo(uri)} is not a directory resource`,
        );
      }
      const page = pageOf(children, cursor, pageSize, (child) => child.uri);
      return {
        resources: page.items,
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
        ...cacheFields(),
      };
    }
    case 'resources/list': {
      const page = pageOf(
        listedResources(viewOf(await store.ready(), view), context.resources),
        cursor,
        pageSize,
        (resource) => resource.uri,
      );
      return { resources: page.items, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
    }
    default: {
      if (uri === INDEX_URI) {
        const answered = observer?.listing();
        try {
          const index = discoveryIndex(viewOf(await store.ready(), view));
          observer?.index(index.kept);
          return { contents: [{ uri, mimeType: 'application/json', text: index.text }] };
        } finally {
          answered?.();
        }
      }
      if (segments() === undefined)
        throw new SkillsServeError('INVALID_URI', `${echo(uri)} is not a skill:// URI this server can serve`);
      const read = onTheWay() ? await context.reader.read(uri) : ({ kind: 'missing' } as const);
      if (read.kind === 'directory')
        throw new SkillsServeError('IS_A_DIRECTORY', `${echo(uri)} is a directory; use resources/directory/read`);
      if (read.kind === 'missing' || !seen())
        throw new SkillsServeError('RESOURCE_NOT_FOUND', `Resource not found: ${echo(uri)}`);
      recordFileRead(recorder, read.snapshot, read.file);
      const content =
        read.text === undefined
          ? { uri, mimeType: read.mimeType, blob: new Base64Blob(read.bytes) }
          : { uri, mimeType: read.mimeType, text: read.text };
      return { contents: [content] };
    }
  }
}

/**
 * Most entries of one `skills/list` page, whatever larger `--page-size` is given: Claude Code keeps at most 100 skills
 * a server and reads no further page then, so a page it reads is a page it keeps (what a connection holds is then
 * known: `compat/offer.ts`). For the same reason no page crosses the 100th entry, whatever smaller `--page-size` is
 * given (pages of 30 are 30, 30, 30, 10, 30, …).
 */
export const SKILLS_PAGE_MAX = EXTENSION_MAX_SKILLS;

/** Most bytes of entry JSON in one `skills/list` page: what Claude Code keeps of a server's entries (512 KiB). */
export const SKILLS_PAGE_MAX_BYTES = EXTENSION_MAX_ENTRY_BYTES;

/** Most characters of `skills/list` page text kept per snapshot (about 1 MB): the first pages of a few views. */
export const PAGE_CACHE_MAX_CHARS = 1024 * 1024;

/** One page as the transports write it. */
interface ListedPage {
  readonly skills: RawJson;
  /** Entries in it. */
  readonly count: number;
  readonly nextCursor: string | undefined;
}

/**
 * The pages of one snapshot: by view and cursor, within {@link PAGE_CACHE_MAX_CHARS}; and the page after the last one
 * answered, built ahead (one, whatever its size).
 */
interface CachedPages {
  readonly pages: Map<string, ListedPage>;
  chars: number;
  ahead: { readonly key: string; readonly page: ListedPage } | undefined;
}

const pageCache = new PerSnapshot<CachedPages>();
/** A number per view object (a reloaded tokens file makes new ones: their pages are cached apart). */
const viewIds = new WeakMap<Visibility, number>();
let nextViewId = 1;

/**
 * One `skills/list` page of `snapshot` as `view` sees it: at most `pageSize` entries and {@link SKILLS_PAGE_MAX_BYTES}
 * of their JSON (at least one entry), the entries' JSON joined once per snapshot, view, cursor and page size (a host
 * polling the first page pays for the join once).
 *
 * @throws SkillsServeError `INVALID_CURSOR` for a cursor that is not one of ours.
 */
function listPage(
  snapshot: Snapshot,
  view: Visibility | undefined,
  cursor: string | undefined,
  pageSize: number,
): ListedPage {
  const cached = pagesOf(snapshot);
  const key = pageKey(view, cursor, pageSize);
  const hit = cached.pages.get(key) ?? (cached.ahead?.key === key ? cached.ahead.page : undefined);
  if (hit !== undefined) return hit;
  return buildPage(snapshot, view, cursor, pageSize, cached, key, false);
}

/**
 * Builds the `skills/list` page at `cursor` ahead, once the loop is free, when it is not built yet: a host pages on
 * as soon as it has read a page, so the next one is made while it reads (at 10,000 skills a first listing is 100
 * pages of about 180 kB each, each otherwise built only once asked for).
 */
function listAhead(snapshot: Snapshot, view: Visibility | undefined, cursor: string, pageSize: number): void {
  setImmediate(() => {
    const cached = pagesOf(snapshot);
    const key = pageKey(view, cursor, pageSize);
    if (cached.pages.has(key) || cached.ahead?.key === key) return;
    try {
      buildPage(snapshot, view, cursor, pageSize, cached, key, true);
    } catch {
      // A cursor of ours is always valid; a request for it would say what is wrong.
    }
  });
}

/** The pages of `snapshot` kept so far. */
function pagesOf(snapshot: Snapshot): CachedPages {
  return pageCache.get(snapshot, undefined, () => ({ pages: new Map(), chars: 0, ahead: undefined }));
}

function pageKey(view: Visibility | undefined, cursor: string | undefined, pageSize: number): string {
  let viewId = 0;
  if (view !== undefined) {
    viewId = viewIds.get(view) ?? nextViewId++;
    viewIds.set(view, viewId);
  }
  // `-` for the first page, `+cursor` after one (an empty cursor is invalid, not the first page).
  return `${viewId}\0${pageSize}\0${cursor === undefined ? '-' : `+${cursor}`}`;
}

function buildPage(
  snapshot: Snapshot,
  view: Visibility | undefined,
  cursor: string | undefined,
  pageSize: number,
  cached: CachedPages,
  key: string,
  ahead: boolean,
): ListedPage {
  const page = pageOf(visibleSkills(snapshot, view), cursor, pageSize, (skill) => skill.uri, {
    max: SKILLS_PAGE_MAX_BYTES,
    sizeOf: (skill) => Buffer.byteLength(skill.json, 'utf8'),
    boundary: SKILLS_PAGE_MAX,
  });
  const text = `[${page.items.map((skill) => skill.json).join(',')}]`;
  const count = page.items.length;
  const kept = cached.chars + text.length <= PAGE_CACHE_MAX_CHARS;
  if (!kept && !ahead) return { skills: new RawJson(text), count, nextCursor: page.nextCursor };
  // Kept as UTF-8 bytes only, which the transports write as they are.
  const built = { skills: new RawJson(Buffer.from(text, 'utf8')), count, nextCursor: page.nextCursor };
  if (kept) {
    cached.pages.set(key, built);
    cached.chars += text.length;
  } else cached.ahead = { key, page: built };
  return built;
}

/**
 * Installs {@link SKILLS_METHODS} on `server`.
 *
 * @param server a server the SDK's `SkillsExtension` is attached to, not yet connected.
 * @param era the era it serves: 2026-07-28 results carry the cache hint.
 * @param observer told what each request was answered (the connection's compat offer).
 */
export function installSkillsHandlers(
  server: McpServer,
  era: Era,
  context: SkillsHandlerContext,
  observer?: SkillsRequestObserver,
): void {
  const low = server.server;
  const answer = (method: SkillsMethod) => async (params: { uri?: string; cursor?: string }, ctx: RequestContext) =>
    asProtocolErrors(async () => {
      const result = await answerSkillsMethod(method, params, era, context, observer, recorderOf(ctx));
      if (context.diagnostics !== undefined && announcesDiagnostics(method, params)) {
        for (const diagnostic of context.diagnostics())
          await ctx.mcpReq.log(logLevelOf(diagnostic), diagnostic, DIAGNOSTICS_LOGGER);
      }
      return result as never;
    }, context.onUnexpected);
  low.setRequestHandler(SKILLS_LIST_METHOD, { params: LIST_PARAMS }, answer(SKILLS_LIST_METHOD));
  low.setRequestHandler(SKILLS_GET_METHOD, { params: URI_PARAMS }, answer(SKILLS_GET_METHOD));
  low.setRequestHandler(
    RESOURCES_DIRECTORY_READ_METHOD,
    { params: DIRECTORY_PARAMS },
    answer(RESOURCES_DIRECTORY_READ_METHOD),
  );
  low.setRequestHandler('resources/read', { params: URI_PARAMS }, answer('resources/read'));
  low.setRequestHandler('resources/list', { params: LIST_PARAMS }, answer('resources/list'));
}
