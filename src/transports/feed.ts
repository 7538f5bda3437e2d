/**
 * The discovery feed over `--http` (docs/feed.md): `<base>/.well-known/agent-skills/index.json` and each artifact,
 * for the view a request was admitted with, from the current snapshot as MCP serves it (`feed/feed.ts` builds it).
 * Answers carry a strong `ETag` (the artifact's digest; the index's SHA-256) and `Cache-Control` from `--ttl` and
 * `--cache-scope` (always `private` for a feed reached with an `Authorization` header, which a shared cache must not
 * answer for another caller); `If-None-Match` is answered 304.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  artifactBytes,
  buildFeed,
  type Feed,
  FEED_INDEX,
  type FileBytes,
  planFeed,
  sha256,
  StaleFileError,
} from '../feed/feed.js';
import type { Diagnostic, Snapshot } from '../index/types.js';
import type { Runtime } from '../runtime.js';
import { viewOf, type Visibility } from '../server/visibility.js';

/** How many times a request builds from a newer snapshot when files changed under it, before answering 503. */
const STALE_RETRIES = 3;

/** Who may cache an answer: the runtime's `--cache-scope`, or `private` for header-authenticated feeds. */
export type FeedScope = 'runtime' | 'private';

/** The feeds of one adapter: one per snapshot and view, built when first asked. */
export class FeedService {
  readonly #runtime: Runtime;
  readonly #feeds = new WeakMap<Snapshot, Promise<Feed>>();
  readonly #etags = new WeakMap<Feed, string>();
  readonly #read: FileBytes;

  constructor(runtime: Runtime) {
    this.#runtime = runtime;
    // Through the server's verified reads: a file found changed is re-indexed before the read answers; the feed then
    // sees bytes that do not match its older snapshot and builds again from the new one.
    this.#read = async (file) => {
      const result = await runtime.reader.read(file.uri);
      if (result.kind !== 'file') throw new StaleFileError(file.uri);
      return result.bytes;
    };
  }

  /**
   * Answers one feed request.
   *
   * @param rest the path below `.well-known/agent-skills/` (`index.json`, `<name>.zip`, `<name>/SKILL.md`).
   * @param view the admitted view (`undefined`: everything).
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    view: Visibility | undefined,
    scope: FeedScope,
  ): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'the discovery feed answers GET and HEAD' }));
      return;
    }
    for (let attempt = 0; attempt <= STALE_RETRIES; attempt++) {
      try {
        const feed = await this.#feedOf(view);
        if (rest === FEED_INDEX) {
          this.#send(req, res, this.#etagOf(feed), 'application/json', scope, () => feed.index);
          return;
        }
        const found = feed.artifacts.get(rest);
        if (found === undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'no such skill in this feed' }));
          return;
        }
        const type = found.artifact.type === 'archive' ? 'application/zip' : 'text/markdown; charset=utf-8';
        const etag = `"${found.digest.slice('sha256:'.length)}"`;
        if (notModified(req, etag)) {
          this.#send(req, res, etag, type, scope, () => '');
          return;
        }
        const bytes = await artifactBytes(found.artifact, this.#read);
        // Deterministic archives: the same files give the digest the index published.
        if (sha256(bytes) !== found.digest) throw new Error(`the artifact ${rest} was rebuilt with other bytes`);
        this.#send(req, res, etag, type, scope, () => bytes);
        return;
      } catch (error) {
        if (!(error instanceof StaleFileError)) {
          this.#runtime.handlers.onUnexpected(error);
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal error' }));
          return;
        }
      }
    }
    res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'the skills keep changing; try again' }));
  }

  /** Why skills of the whole catalog are left out of the feed (no file is read; a view's feed leaves out fewer). */
  problems(): readonly Diagnostic[] {
    return planFeed(this.#runtime.store.current.ordered).problems;
  }

  /** The feed of the current snapshot as `view` sees it; a build that met a changed file is not kept. */
  async #feedOf(view: Visibility | undefined): Promise<Feed> {
    const snapshot = viewOf(await this.#runtime.store.ready(), view);
    let feed = this.#feeds.get(snapshot);
    if (feed === undefined) {
      feed = buildFeed(snapshot.ordered, this.#read);
      this.#feeds.set(snapshot, feed);
      feed.catch(() => this.#feeds.delete(snapshot));
    }
    return feed;
  }

  #etagOf(feed: Feed): string {
    let etag = this.#etags.get(feed);
    if (etag === undefined) this.#etags.set(feed, (etag = `"${sha256(feed.index).slice('sha256:'.length)}"`));
    return etag;
  }

  /** Writes a 200 (a 304 when `If-None-Match` names `etag`) with the cache headers; no body for HEAD. */
  #send(
    req: IncomingMessage,
    res: ServerResponse,
    etag: string,
    type: string,
    scope: FeedScope,
    body: () => string | Uint8Array,
  ): void {
    const hint = this.#runtime.handlers.cacheHint();
    const headers = {
      etag,
      'cache-control': `${scope === 'private' ? 'private' : hint.cacheScope}, max-age=${Math.floor(hint.ttlMs / 1000)}`,
    };
    if (notModified(req, etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    const bytes = body();
    res.writeHead(200, {
      ...headers,
      'content-type': type,
      'content-length': typeof bytes === 'string' ? Buffer.byteLength(bytes, 'utf8') : bytes.byteLength,
    });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  }
}

/** Whether `If-None-Match` names `etag` (or is `*`; RFC 9110 §13.1.2, weak comparison). */
function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//u, ''))
    .some((tag) => tag === '*' || tag === etag);
}
