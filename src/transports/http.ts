/**
 * Streamable HTTP serving (`--http [host:]port`): stateless, so any replica answers any request over the same tree
 * (cursors are keyset cursors on URIs, valid on every replica). Both protocol eras through the SDK's
 * `createMcpHandler`; 2026-07-28 clients that keep a `subscriptions/listen` stream open hear about changes. One request
 * pipeline (docs/ARCHITECTURE.md, "Authorization"): a table of routes, each public (health, OAuth metadata, metrics)
 * or gated; a gated request passes the DNS-rebinding checks of a loopback bind and then the one {@link Gate}, whose
 * admission names the view (`--http-tokens FILE`, `--auth-claims`: one MCP handler, with its own listen streams, per
 * view, so nobody hears of what they may not see).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';

import type { HttpEndpoint } from '../config.js';
import { SkillsServeError } from '../errors.js';
import { FEED_DIR } from '../feed/feed.js';
import type { Snapshot } from '../index/types.js';
import { decodePercent } from '../index/uri.js';
import { isLoopbackHost } from '../loopback.js';
import type { Adapter, Runtime, RuntimeChange } from '../runtime.js';
import { createServerFactory } from '../server/create-server.js';
import { diagnosticsInView, type PublicDiagnostic } from '../server/diagnostics.js';
import { READ_RECORDER, type ReadRecorder, type ServedRead } from '../server/usage.js';
import { isVisibleUri, type Visibility } from '../server/visibility.js';
import type { AuthFailure } from './auth/challenge.js';
import { ClaimViews } from './auth/claims.js';
import { type Admitted, type Authorizer, Gate, type Verdict } from './auth/gate.js';
import { OAuthAuthorizer, type OAuthSettings } from './auth/oauth.js';
import { FeedService } from './feed.js';
import { reviewCacheScope, reviewPrefixes } from './http-review.js';
import { HttpTokens, StaticToken } from './http-tokens.js';
import { errorCodeLabel, HttpMetrics, jsonRpcErrorCode, methodLabel, METRICS_PATH, outcomeLabel } from './metrics.js';
import { UsageMetrics, viewLabel } from './usage-metrics.js';

/** The path MCP is served on. */
export const MCP_PATH = '/mcp';
/** Where the discovery feed is served (docs/feed.md): with an `Authorization` header, or open when nobody is asked. */
export const FEED_PREFIX = `/${FEED_DIR}/`;
/** Feeds reached by a key in the path instead of a header: `/feeds/<key>/.well-known/agent-skills/…`. */
export const KEYED_FEEDS = '/feeds';
/** Liveness (always 200 while the process runs; `/healthz` is its older name) and readiness (200 once the first index
 * build is served). */
export const HEALTH_PATH = '/healthz';
export const LIVE_PATH = '/livez';
export const READY_PATH = '/readyz';

/** How long an idle keep-alive connection is kept (ms). */
export const KEEP_ALIVE_MS = 65_000;

/** How often responses served to expired OAuth tokens (listen streams) are looked for and ended (ms). */
export const EXPIRY_SWEEP_MS = 250;

/**
 * A request's `Authorization` value. Node keeps only the first of several such headers in `req.headers`; here they
 * are joined (`a, b`), a value that neither the static tokens nor the OAuth gate accept, so a proxy that read another
 * of them cannot disagree with what is served. (`req.headersDistinct` says the same but builds every header's list:
 * about 5 µs a request, measured, against a scan of the raw pairs.)
 */
function authorizationOf(req: IncomingMessage): string | undefined {
  const first = req.headers.authorization;
  if (first === undefined) return undefined;
  const raw = req.rawHeaders;
  const values: string[] = [];
  for (let at = 0; at + 1 < raw.length; at += 2) {
    const name = raw[at] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') values.push(raw[at + 1] as string);
  }
  return values.length > 1 ? values.join(', ') : first;
}

/** How HTTP clients authenticate: nobody, one token (sees everything), or a tokens file (each token its view). */
export interface HttpAuth {
  readonly token?: string | undefined;
  /** `--http-tokens FILE`. */
  readonly tokensFile?: string | undefined;
  /** `--auth-issuer` and the rest: OAuth 2.0 access tokens (checked after the static tokens, which win). */
  readonly oauth?: OAuthSettings | undefined;
}

/** DNS-rebinding protection of a loopback bind: the `Host` and `Origin` of a request must be loopback too. */
const HOST_GUARD = localhostHostValidation();
const ORIGIN_GUARD = localhostOriginValidation();

/** Whether a bind address is a wildcard, which names no URL clients use. */
function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** One MCP handler and its Node adapter: per view, so each view's listen streams hear only what it may see. */
interface ViewHandler {
  readonly handler: McpHttpHandler;
  readonly serve: ReturnType<typeof toNodeHandler>;
}

/**
 * One route of the pipeline. A public route answers anyone; a gated one is served only what the gate admitted, and
 * each of its requests is counted and logged (`request`), refusals included.
 */
type Route =
  | { readonly access: 'public'; readonly serve: (req: IncomingMessage, res: ServerResponse) => void }
  | {
      readonly access: 'gated';
      readonly serve: (req: IncomingMessage, res: ServerResponse, admitted: Admitted, exchange: Exchange) => void;
      /** The method label of a finished request (metrics and the access log). */
      readonly label: (req: IncomingMessage, exchange: Exchange) => string;
      /** Admits by something else than the `Authorization` header (a feed key in the path); refused: 404. */
      readonly admit?: (req: IncomingMessage) => Verdict;
    };

/** Largest request body read before the SDK's handler, to count the request under its method (bytes). */
export const LABEL_BODY_MAX_BYTES = 64 * 1024;

/** Serves the runtime over Streamable HTTP at `http://<host>:<port>/mcp`; `/healthz` and `/readyz` beside it. */
export class HttpAdapter implements Adapter {
  readonly ended: Promise<string> = new Promise(() => undefined); // only a signal ends an HTTP server
  readonly #endpoint: HttpEndpoint;
  readonly #auth: HttpAuth;
  #server: Server | undefined;
  #gate = new Gate([]);
  #oauth: OAuthAuthorizer | undefined;
  #metrics: HttpMetrics | undefined;
  #usage: UsageMetrics | undefined;
  /** Responses served to admissions that end (OAuth tokens), with when they end (ms epoch). */
  readonly #expiring = new Map<ServerResponse, number>();
  #sweep: NodeJS.Timeout | undefined;
  readonly #handlers = new Map<Visibility | undefined, ViewHandler>();
  #logger: Runtime['logger'] | undefined;
  /** Reviews the views' prefixes again (a reload of the tokens file); set once the views are known. */
  #reviewReloads: () => void = () => undefined;
  /** MCP requests served (logged when the server stops). */
  #requests = 0;

  constructor(endpoint: HttpEndpoint, auth: HttpAuth = {}) {
    this.#endpoint = endpoint;
    this.#auth = auth;
  }

  /**
   * @throws SkillsServeError `CONFIG_INVALID` when the tokens file or the claims file cannot be read or parsed, or
   *   `--auth-issuer` is used on a wildcard address without `--auth-audience`; the listen error (`EADDRINUSE`,
   *   `EACCES`) when the port cannot be bound.
   */
  async start(runtime: Runtime): Promise<void> {
    const { logger } = runtime;
    this.#logger = logger;
    const { host, port } = this.#endpoint;
    const authorizers = this.#staticAuthorizers(logger);
    const claimViews = this.#claimViews(host);
    this.#reviewViews(runtime, authorizers, claimViews);
    this.#gate = new Gate(authorizers);
    const handlerFor = (view: Visibility | undefined): ViewHandler => this.#handlerFor(runtime, view);
    handlerFor(undefined);
    runtime.on('changed', (change) => {
      for (const [view, { handler }] of this.#handlers) announce(handler, change, view);
    });
    const loopback = isLoopbackHost(host);
    if (!loopback && this.#auth.token === undefined && this.#auth.tokensFile === undefined && !this.#auth.oauth) {
      logger.warn(
        { event: 'http-open', host },
        `serving on non-loopback address ${host} without --http-token, --http-tokens or --auth-issuer: anyone who can reach the port can read every skill`,
      );
    }
    const feeds = new FeedService(runtime);
    this.#logFeedProblems(feeds);
    runtime.on('ready', () => this.#logFeedProblems(feeds));
    runtime.on('changed', () => this.#logFeedProblems(feeds));
    const feedRoutes = this.#feedRoutes(feeds);
    const routes = new Map<string, Route>([
      [MCP_PATH, this.#mcpRoute(handlerFor)],
      [KEYED_FEEDS, feedRoutes.url],
      [METRICS_PATH, { access: 'public', serve: (req, res) => this.#serveMetrics(req, res) }],
    ]);
    const health: Route = { access: 'public', serve: (req, res) => this.#serveHealth(req, res, runtime) };
    for (const path of [HEALTH_PATH, LIVE_PATH, READY_PATH]) routes.set(path, health);
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const pathname = (req.url ?? '/').split('?')[0] as string;
      const route =
        routes.get(pathname) ??
        (pathname.startsWith(FEED_PREFIX)
          ? feedRoutes.bearer
          : pathname.startsWith(`${KEYED_FEEDS}/`)
            ? feedRoutes.keyed
            : undefined);
      if (route === undefined) notFound(res);
      else if (route.access === 'public') route.serve(req, res);
      else this.#passGate(route, req, res, loopback);
    });
    // An idle keep-alive connection outlives a load balancer's (60 s on the common ones) and a client's: the server
    // never closes one just as a request is sent on it ("other side closed").
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = KEEP_ALIVE_MS + 1000;
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
        reject(Object.assign(new Error(`cannot serve HTTP on ${host}:${port}: ${reason}`), { code: error.code }));
      });
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    const actualPort = typeof address === 'object' && address !== null ? address.port : port;
    const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const url = `http://${shownHost}:${actualPort}${MCP_PATH}`;
    // Made before any request can be read (the listen callback's continuation runs before the next I/O turn); the
    // audience defaults to the URL just bound, so `--http 127.0.0.1:0` works. Static tokens are asked first: they win.
    const { oauth } = this.#auth;
    if (oauth !== undefined) {
      const resource = new OAuthAuthorizer(oauth, oauth.audience ?? url, claimViews);
      this.#oauth = resource;
      this.#gate = new Gate([...authorizers, resource]);
      const metadata: Route = { access: 'public', serve: (_req, res) => serveMetadata(res, resource) };
      for (const path of resource.metadataPaths) routes.set(path, metadata);
    }
    this.#metrics = new HttpMetrics(runtime, () => this.#handlers.size, this.#gate.failures);
    this.#usage = new UsageMetrics(runtime);
    if (!this.#gate.open) this.#sweep = setInterval(() => this.#endExpired(), EXPIRY_SWEEP_MS).unref();
    logger.info({ event: 'serving', transport: 'http', url, port: actualPort }, `serving on ${url}; indexing`);
    if (this.#oauth !== undefined) {
      logger.info(
        { event: 'auth-resource', resource: this.#oauth.audience, metadata: this.#oauth.metadataUrl },
        `OAuth resource ${this.#oauth.audience}; metadata at ${this.#oauth.metadataUrl}`,
      );
      this.#discoverIssuers();
    }
  }

  /**
   * The one way into a gated route: counted and logged from here on (a request the Host or Origin check refuses
   * too), the DNS-rebinding checks of a loopback bind, then the gate (or the route's own admission: a feed key in the
   * path); a refusal is answered by the gate's words, or 404 on a route that hides what exists.
   */
  #passGate(route: Extract<Route, { access: 'gated' }>, req: IncomingMessage, res: ServerResponse, loopback: boolean) {
    const exchange: Exchange = {
      started: performance.now(),
      subject: undefined,
      refused: undefined,
      body: undefined,
      view: undefined,
      admitted: false,
      rpcError: undefined,
      read: undefined,
    };
    res.once('close', () => this.#finished(req, res, route.label(req, exchange), exchange));
    if (loopback && !(HOST_GUARD(req, res) && ORIGIN_GUARD(req, res))) return;
    const pass = (verdict: Verdict): void => {
      if (!verdict.ok) {
        exchange.refused = verdict.reason;
        this.#metrics?.authFailures.inc({ reason: verdict.reason });
        if (route.admit !== undefined) {
          notFound(res);
          return;
        }
        const refusal = this.#gate.refusal(verdict.reason);
        res.writeHead(refusal.status, refusal.headers);
        res.end(refusal.body);
        return;
      }
      // A listen stream lasts no longer than the admission it was opened with (checked every EXPIRY_SWEEP_MS: one
      // timer for all, not one per request; the entry goes when the response closes, in #finished).
      if (verdict.expiresAt !== Infinity) this.#expiring.set(res, verdict.expiresAt);
      exchange.subject = verdict.subject;
      exchange.view = verdict.view;
      exchange.admitted = true;
      route.serve(req, res, verdict, exchange);
    };
    // An admission seen before is answered in this turn; only a new token waits for its signature or introspection.
    const verdict = route.admit?.(req) ?? this.#gate.authorize(authorizationOf(req), req.socket);
    if (verdict instanceof Promise) void verdict.then(pass);
    else pass(verdict);
  }

  /** The MCP handler of a view (`undefined`: everything), made on first use. */
  #handlerFor(runtime: Runtime, view: Visibility | undefined): ViewHandler {
    const { logger } = runtime;
    let entry = this.#handlers.get(view);
    if (entry === undefined) {
      // No connection to push diagnostics to: they go with each first skills/list page, as far as the view sees
      // (worked out once per snapshot: a new git commit's roots come with a new snapshot).
      let memo: { snapshot: Snapshot; diagnostics: readonly PublicDiagnostic[] } | undefined;
      const diagnostics = (): readonly PublicDiagnostic[] => {
        const snapshot = runtime.store.current;
        if (memo?.snapshot !== snapshot)
          memo = { snapshot, diagnostics: diagnosticsInView(snapshot, runtime.roots, view) };
        return memo.diagnostics;
      };
      const factory = createServerFactory(runtime, {
        stateless: true,
        ...(view === undefined ? {} : { visibility: view }),
        diagnostics,
      });
      const handler = createMcpHandler(factory, {
        legacy: 'stateless',
        onerror: (error) => logger.debug({ event: 'request-error', err: error }, 'request error'),
      });
      const serve = toNodeHandler(handler, {
        onerror: (error) => logger.warn({ event: 'request-failed', err: error }, 'HTTP request failed'),
      });
      this.#handlers.set(view, (entry = { handler, serve }));
    }
    return entry;
  }

  /**
   * `--http-token` and `--http-tokens FILE` as authorizers (in that order).
   *
   * @throws SkillsServeError `CONFIG_INVALID` when the tokens file cannot be read or parsed.
   */
  #staticAuthorizers(logger: Runtime['logger']): Authorizer[] {
    const { token, tokensFile } = this.#auth;
    const deprecated = (message: string): void => logger.warn({ event: 'deprecated' }, message);
    const authorizers: Authorizer[] = token === undefined ? [] : [new StaticToken(token, deprecated)];
    if (tokensFile === undefined) return authorizers;
    try {
      authorizers.push(
        new HttpTokens(tokensFile, {
          unusable: (message) => logger.warn({ event: 'http-tokens-unusable' }, message),
          deprecated,
          reloaded: (views) => {
            // A removed or changed token's handler goes, and with it its open listen streams: a revoked token hears
            // nothing more. Unchanged tokens keep theirs.
            let closed = 0;
            for (const [view, { handler }] of this.#handlers) {
              if (view === undefined || views.has(view)) continue;
              this.#handlers.delete(view);
              void handler.close().catch(() => undefined);
              closed++;
            }
            logger.info(
              { event: 'http-tokens-reloaded', tokens: views.size, closedViews: closed },
              `${tokensFile} reloaded: ${views.size} token(s) in force`,
            );
            this.#reviewReloads();
          },
        }),
      );
    } catch (error) {
      throw new SkillsServeError('CONFIG_INVALID', `--http-tokens ${tokensFile}: ${(error as Error).message}`);
    }
    return authorizers;
  }

  /**
   * Reviews what the views are configured to see (`http-review.ts`): `--cache-scope public` with views now, each
   * view's prefixes against the first catalog and against every reload of the tokens file. Each finding is a warning;
   * with `--strict`, one found at start refuses to serve (exit 2).
   *
   * @throws SkillsServeError `CONFIG_INVALID` for `--cache-scope public` with views under `--strict`.
   */
  #reviewViews(runtime: Runtime, authorizers: readonly Authorizer[], claimViews: ClaimViews | undefined): void {
    const { logger, config } = runtime;
    const tokens = authorizers.find((authorizer) => authorizer instanceof HttpTokens);
    const files = [
      ...(tokens === undefined
        ? []
        : [{ flag: '--http-tokens', file: this.#auth.tokensFile, views: () => tokens.views }]),
      ...(claimViews === undefined
        ? []
        : [{ flag: '--auth-claims', file: this.#auth.oauth?.claimsFile, views: () => claimViews.entries }]),
    ];
    const scope = reviewCacheScope(
      config.cacheScope,
      files.map(({ flag }) => flag),
    );
    if (scope !== undefined && config.strict)
      throw new SkillsServeError('CONFIG_INVALID', `--strict: ${scope.message}`);
    if (scope !== undefined) logger.warn({ event: scope.event, ...scope.fields }, scope.message);
    const review = (snapshot: Snapshot, atStart: boolean): void => {
      if (snapshot.generation === 0) return; // a reload before the first catalog: 'ready' reviews it
      const findings = files.flatMap(({ flag, file, views }) => reviewPrefixes(snapshot, views(), `${flag} ${file}`));
      for (const { event, fields, message } of findings) logger.warn({ event, ...fields }, message);
      if (atStart && config.strict && findings.length > 0)
        runtime.refuse(
          `--strict: ${findings.length} view prefix(es) match no served skill (listed above); not serving`,
        );
    };
    runtime.on('ready', (snapshot) => review(snapshot, true));
    if (tokens !== undefined) this.#reviewReloads = (): void => review(runtime.store.current, false);
  }

  /**
   * The `--auth-claims` file's views, checked before the port is bound.
   *
   * @throws SkillsServeError `CONFIG_INVALID` when the file cannot be read or parsed, or `--auth-issuer` is used on a
   *   wildcard address without `--auth-audience`.
   */
  #claimViews(host: string): ClaimViews | undefined {
    const { oauth } = this.#auth;
    if (oauth === undefined) return undefined;
    if (oauth.audience === undefined && isWildcardHost(host))
      throw new SkillsServeError(
        'CONFIG_INVALID',
        `--auth-issuer on a wildcard address (${host}) needs --auth-audience: the URL clients reach this server at`,
      );
    if (oauth.claimsFile === undefined) return undefined;
    try {
      return new ClaimViews(oauth.claimsFile);
    } catch (error) {
      throw new SkillsServeError('CONFIG_INVALID', `--auth-claims ${oauth.claimsFile}: ${(error as Error).message}`);
    }
  }

  /** The `/mcp` route: the admitted view's MCP handler. */
  #mcpRoute(handlerFor: (view: Visibility | undefined) => ViewHandler): Route {
    return {
      access: 'gated',
      label: (req, exchange) => methodLabel(req.headers['mcp-method'], exchange.body),
      serve: (req, res, admitted, exchange) => {
        const { serve } = handlerFor(admitted.view);
        this.#requests++;
        if (req.headers['mcp-method'] === 'subscriptions/listen') {
          this.#metrics?.listenStreams.inc();
          res.once('close', () => this.#metrics?.listenStreams.dec());
        } else {
          sniffErrors(res, (code) => (exchange.rpcError ??= code));
        }
        // What the handlers serve is told to this request's recorder, which reaches them as the SDK's pass-through
        // AuthInfo (server/usage.ts); never the token.
        const auth = {
          token: '',
          clientId: admitted.subject ?? '',
          scopes: [],
          extra: { [READ_RECORDER]: this.#recorder(exchange) },
        };
        const length = Number(req.headers['content-length']);
        if (req.method !== 'POST' || !(length > 0 && length <= LABEL_BODY_MAX_BYTES)) {
          void serve(Object.assign(req, { auth }), res);
          return;
        }
        // A small body is read first, so a 2025-era request (no `mcp-method` header) is counted under its method,
        // and handed to the SDK as read.
        void readBody(req).then(
          (body) => {
            exchange.body = body;
            return serve({ ...replayRequest(req, body), auth }, res);
          },
          () => res.destroy(),
        );
      },
    };
  }

  /**
   * The discovery feed's routes (docs/feed.md): `bearer` at `/.well-known/agent-skills/…` (the gate's usual admission;
   * the whole catalog when nobody is asked for a token), `keyed` at `/feeds/<key>/.well-known/agent-skills/…` (the
   * view of the static token the key was made from; any other key: 404), and `url` at `/feeds`, which tells a token's
   * holder the path of its keyed feed.
   */
  #feedRoutes(feeds: FeedService): { bearer: Route; keyed: Route; url: Route } {
    const label = (): string => 'feed';
    const keyOf = (req: IncomingMessage): string => ((req.url ?? '').split('?')[0] as string).split('/')[2] ?? '';
    return {
      bearer: {
        access: 'gated',
        label,
        serve: (req, res, admitted) => {
          const rest = ((req.url ?? '').split('?')[0] as string).slice(FEED_PREFIX.length);
          void feeds.serve(req, res, decodePercent(rest) ?? '', admitted.view, this.#gate.open ? 'runtime' : 'private');
        },
      },
      keyed: {
        access: 'gated',
        label,
        admit: (req) => this.#gate.admitFeed(keyOf(req)),
        serve: (req, res, admitted) => {
          const pathname = (req.url ?? '').split('?')[0] as string;
          const below = `${KEYED_FEEDS}/${keyOf(req)}${FEED_PREFIX}`;
          if (!pathname.startsWith(below)) {
            notFound(res);
            return;
          }
          void feeds.serve(req, res, decodePercent(pathname.slice(below.length)) ?? '', admitted.view, 'runtime');
        },
      },
      url: {
        access: 'gated',
        label,
        serve: (req, res) => {
          const key = this.#gate.open ? '' : this.#gate.feedKeyFor(authorizationOf(req));
          res.writeHead(key === undefined ? 404 : 200, {
            'content-type': 'application/json',
            'cache-control': 'no-store',
          });
          res.end(
            JSON.stringify(
              key === undefined
                ? { error: 'this token has no feed URL: feeds without a header are for --http-token and --http-tokens' }
                : { feed: key === '' ? '/' : `${KEYED_FEEDS}/${key}` },
            ),
          );
        },
      },
    };
  }

  /** Feed problems logged so far (by rule and file): each is logged once while it lasts. */
  #feedProblems = new Set<string>();

  /** Logs each skill of the catalog newly left out of the discovery feed (`feed-skill-left-out`, warn). */
  #logFeedProblems(feeds: FeedService): void {
    const now = new Set<string>();
    for (const problem of feeds.problems()) {
      const key = `${problem.rule}\n${problem.file}\n${problem.message}`;
      now.add(key);
      if (this.#feedProblems.has(key)) continue;
      this.#logger?.warn({ event: 'feed-skill-left-out', rule: problem.rule, hint: problem.hint }, problem.message);
    }
    this.#feedProblems = now;
  }

  /** The recorder of one request's reads: the first is logged, each `SKILL.md` read counted under its view. */
  #recorder(exchange: Exchange): ReadRecorder {
    return {
      served: (read) => {
        exchange.read ??= read;
        if (read.skillMd) this.#usage?.read(read.skill, viewLabel(exchange.view));
      },
    };
  }

  /**
   * `/metrics`: the registry in the Prometheus text format. The per-skill series (`UsageMetrics`) name skill paths,
   * which not everyone may see: they are added when nobody is asked for a token, or for a scrape whose
   * `Authorization` the gate admits to everything (`--http-token`, an entry or claim with the prefix `*`).
   */
  #serveMetrics(req: IncomingMessage, res: ServerResponse): void {
    const metrics = this.#metrics;
    const usage = this.#usage;
    if (metrics === undefined || usage === undefined) {
      res.writeHead(503).end();
      return;
    }
    const answer = (withUsage: boolean): void =>
      void Promise.all([metrics.registry.metrics(), withUsage ? usage.registry.metrics() : '']).then(([text, more]) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text + more);
      });
    const header = authorizationOf(req);
    if (this.#gate.open || header === undefined) {
      answer(this.#gate.open);
      return;
    }
    const seesAll = (verdict: Verdict): boolean => verdict.ok && seesEverything(verdict.view);
    const verdict = this.#gate.authorize(header, req.socket);
    if (verdict instanceof Promise) void verdict.then((settled) => answer(seesAll(settled)));
    else answer(seesAll(verdict));
  }

  /** `/healthz`, `/livez` (200 while the process runs) and `/readyz` (200 once the first index build is served). */
  #serveHealth(req: IncomingMessage, res: ServerResponse, runtime: Runtime): void {
    const snapshot = runtime.store.current;
    // Behind --auth-issuer, ready only once an issuer is discovered (before, every token is refused); asking meanwhile
    // tries again, so a probe, not only a request, finds an issuer that comes up late.
    const issuers = this.#oauth?.discovered ?? 'all';
    if (issuers !== 'all') this.#discoverIssuers();
    const status = snapshot.generation === 0 ? 'indexing' : issuers === 'none' ? 'issuer_unreachable' : 'ready';
    const path = (req.url ?? '/').split('?')[0];
    res.writeHead(path === READY_PATH && status !== 'ready' ? 503 : 200, { 'content-type': 'application/json' });
    // With per-team tokens or OAuth, even the number of skills is not told to unauthenticated callers, nor which
    // remote and commit a refusal is about (its code is).
    const counts = this.#gate.countsArePublic ? { skills: snapshot.ordered.length } : {};
    // A root that refuses a newer version (a git commit without an allowed signature) still serves the one before, so
    // the server stays ready; the reason is told.
    const refused = runtime.refusals.map((refusal) => (this.#gate.countsArePublic ? refusal : { code: refusal.code }));
    res.end(
      JSON.stringify({
        status,
        ...counts,
        generation: snapshot.generation,
        ...(refused.length === 0 ? {} : { refused }),
      }),
    );
  }

  /** Each issuer's last state logged: a change is logged once, not at every probe. */
  readonly #announced = new Map<string, 'discovered' | 'unreachable'>();

  /** Discovers the issuers again (each waits out its retry delay) and logs what changed. */
  #discoverIssuers(): void {
    const logger = this.#logger;
    void this.#oauth?.discover().then((issuers) => {
      for (const { issuer, problem } of issuers) {
        const state = problem === undefined ? 'discovered' : 'unreachable';
        if (this.#announced.get(issuer) === state) continue;
        this.#announced.set(issuer, state);
        if (problem === undefined) logger?.info({ event: 'auth-issuer-discovered', issuer }, `${issuer} discovered`);
        else
          logger?.warn(
            { event: 'auth-issuer-unreachable', issuer },
            `${problem}; tokens it issued fail until it answers`,
          );
      }
    });
  }

  /** Ends the responses whose admission has ended. */
  #endExpired(): void {
    const now = Date.now();
    for (const [res, expiresAt] of this.#expiring) {
      if (expiresAt > now) continue;
      this.#expiring.delete(res);
      endExpired(res);
    }
  }

  /** Counts a finished gated request and writes its access log line (never the token). */
  #finished(req: IncomingMessage, res: ServerResponse, method: string, exchange: Exchange): void {
    this.#expiring.delete(res);
    const { rpcError, read } = exchange;
    const outcome = res.writableFinished ? outcomeLabel(res.statusCode, rpcError) : 'aborted';
    const seconds = (performance.now() - exchange.started) / 1000;
    const labels = { method, outcome };
    this.#metrics?.requests.inc(labels);
    this.#metrics?.latency.observe(labels, seconds);
    if (rpcError !== undefined) this.#metrics?.jsonRpcErrors.inc({ method, code: errorCodeLabel(rpcError) });
    this.#logger?.info(
      {
        event: 'request',
        method,
        outcome,
        status: res.statusCode,
        ms: Math.round(seconds * 1e5) / 100,
        ...(exchange.subject === undefined ? {} : { subject: exchange.subject }),
        ...(exchange.refused === undefined ? {} : { refused: exchange.refused }),
        ...(exchange.admitted ? { view: viewLabel(exchange.view) } : {}),
        ...(rpcError === undefined ? {} : { error: rpcError }),
        ...(read === undefined ? {} : readFields(read)),
      },
      'request',
    );
  }

  /** Stops accepting connections, finishes requests in flight, closes listen streams, within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#gate.close();
    clearInterval(this.#sweep);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await Promise.race([
      Promise.allSettled([...[...this.#handlers.values()].map(({ handler }) => handler.close()), closed]),
      timer,
    ]);
    server.closeAllConnections();
    this.#logger?.info({ event: 'http-stopped', requests: this.#requests }, `served ${this.#requests} MCP requests`);
  }
}

/** The Protected Resource Metadata document (RFC 9728 §3.2: JSON; clients in browsers fetch it cross-origin). */
function serveMetadata(res: ServerResponse, resource: OAuthAuthorizer): void {
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'max-age=3600',
    'access-control-allow-origin': '*',
  });
  res.end(resource.metadataBody);
}

/** 404, as for a path nothing is served at. */
function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: `not found; MCP is served at ${MCP_PATH}` }));
}

/** Reads a request's body (Node's parser holds it to `content-length`, which the caller bounded). */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The request as the SDK's Node adapter reads it, with its body already read: `method`, `url`, `headers` and the
 * body as the only chunk.
 */
function replayRequest(
  req: IncomingMessage,
  body: Buffer,
): {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  [Symbol.asyncIterator](): AsyncGenerator<Buffer>;
} {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    async *[Symbol.asyncIterator]() {
      yield body;
    },
  };
}

/**
 * Ends a response whose admission has ended. A listen stream (`subscriptions/listen`: server-sent events, written an
 * event at a time) gets its terminating chunk, so the client sees it end and opens it again with a new token; any
 * other response would be cut mid-body, so it is destroyed.
 */
function endExpired(res: ServerResponse): void {
  if (res.req.headers['mcp-method'] !== 'subscriptions/listen') {
    res.destroy();
    return;
  }
  // The SDK's pump may write one more event before it sees the response close: that write fails, harmlessly.
  res.on('error', () => undefined);
  res.end();
}

/** What is noted of one gated request while it is served, for its metrics and access log line. */
interface Exchange {
  readonly started: number;
  /** The admission's subject (OAuth `sub` or `client_id`), or the `--http-tokens` entry's name. */
  subject: string | undefined;
  /** Why the request was refused (`skills_serve_auth_failures_total`'s reason), when it was. */
  refused: AuthFailure | undefined;
  /** The body read before the SDK's handler, when it was. */
  body: Buffer | undefined;
  /** The admission's view, once admitted. */
  view: Visibility | undefined;
  admitted: boolean;
  /** The JSON-RPC error code the response carried, if any. */
  rpcError: number | undefined;
  /** The first thing a handler served (a read, or `skills/get`'s entry), if any. */
  read: ServedRead | undefined;
}

/** The access log fields of a read: the URI and digest served, its skill, and its root's version (a git commit). */
function readFields(read: ServedRead): Record<string, string> {
  return {
    uri: read.uri,
    skill: read.skill.uri,
    digest: read.digest,
    ...(read.skill.version === undefined ? {} : { version: read.skill.version }),
  };
}

/** Whether a view sees every skill: none given, or one whose prefixes include the whole namespace (`*`). */
function seesEverything(view: Visibility | undefined): boolean {
  return view === undefined || view.prefixes.some((prefix) => prefix.length === 0);
}

/**
 * Notes the JSON-RPC error code of a response as it is written ({@link jsonRpcErrorCode} on each chunk's start): the
 * SDK answers most errors of a request it read with 200, so the status alone would count them as `ok`.
 */
function sniffErrors(res: ServerResponse, found: (code: number) => void): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const look = (chunk: unknown): void => {
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return;
    const code = jsonRpcErrorCode(chunk);
    if (code !== undefined) found(code);
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    look(chunk);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    look(chunk);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
}

/** Tells one handler's listen streams about a change, as far as its view may see it. */
function announce(handler: McpHttpHandler, { diff }: RuntimeChange, view: Visibility | undefined): void {
  const seen = view === undefined ? () => true : (uri: string) => isVisibleUri(view, uri);
  const touchesView = view === undefined || diff.skillsChanged.some(seen);
  if (diff.listChanged && touchesView) handler.notify.resourcesChanged();
  for (const uris of [diff.updated, diff.appeared])
    for (const uri of uris) if (seen(uri)) handler.notify.resourceUpdated(uri);
}
