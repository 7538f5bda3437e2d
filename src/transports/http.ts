/**
 * Streamable HTTP serving (`--http [host:]port`): stateless, so any replica answers any request over the same tree
 * (cursors are keyset cursors on URIs, valid on every replica). Both protocol eras through the SDK's
 * `createMcpHandler`; 2026-07-28 clients that keep a `subscriptions/listen` stream open hear about changes. Stateless
 * 2025-era reads take the fast path (`http-fast.ts`). DNS-rebinding protection (Host and Origin checks) for loopback
 * binds; an optional bearer token (`--http-token`), or per-team tokens each seeing part of the namespace
 * (`--http-tokens FILE`: one handler, with its own listen streams, per view, so nobody hears of what they may not see).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';

import type { HttpEndpoint } from '../config.js';
import { SkillsServeError } from '../errors.js';
import type { Snapshot } from '../index/types.js';
import type { Adapter, Runtime, RuntimeChange } from '../runtime.js';
import { createServerFactory } from '../server/create-server.js';
import { diagnosticsInView, type PublicDiagnostic } from '../server/diagnostics.js';
import type { SkillsHandlerContext } from '../server/skills-handlers.js';
import { isVisibleUri, type Visibility } from '../server/visibility.js';
import { AUTH_FAILURES, type AuthFailure } from './auth/challenge.js';
import { ClaimViews } from './auth/claims.js';
import { type Admitted, type Denied, OAuthGate, type OAuthSettings } from './auth/oauth.js';
import { replayRequest, tryFastPath } from './http-fast.js';
import { HttpTokens, tokenDigest } from './http-tokens.js';
import { HttpMetrics, methodLabel, METRICS_PATH, outcomeLabel } from './metrics.js';

/** The path MCP is served on. */
export const MCP_PATH = '/mcp';
/** Liveness (always 200 while the process runs; `/healthz` is its older name) and readiness (200 once the first index
 * build is served). */
export const HEALTH_PATH = '/healthz';
export const LIVE_PATH = '/livez';
export const READY_PATH = '/readyz';

/** How often responses served to expired OAuth tokens (listen streams) are looked for and ended (ms). */
export const EXPIRY_SWEEP_MS = 250;

/** Whether a bind address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/u.test(host);
}

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

/** The bearer token of an `Authorization` header, or `undefined`. */
function bearerOf(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/iu.exec(header ?? '')?.[1];
}

/**
 * Whether an `Authorization` header carries the bearer token (compared in constant time).
 *
 * @param header the request's `Authorization` value.
 * @param token the configured token.
 */
export function hasBearerToken(header: string | undefined, token: string): boolean {
  const given = bearerOf(header);
  if (given === undefined) return false;
  // Digests of equal length: the comparison's time says nothing about the token, not even its length.
  return timingSafeEqual(tokenDigest(given), tokenDigest(token));
}

/** How HTTP clients authenticate: nobody, one token (sees everything), or a tokens file (each token its view). */
export interface HttpAuth {
  readonly token?: string | undefined;
  /** `--http-tokens FILE`. */
  readonly tokensFile?: string | undefined;
  /** `--auth-issuer` and the rest: OAuth 2.0 access tokens (checked after the static tokens, which win). */
  readonly oauth?: OAuthSettings | undefined;
}

/** Whether a bind address is a wildcard, which names no URL clients use. */
function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** One MCP handler and its Node adapter: per view, so each view's listen streams hear only what it may see. */
interface ViewHandler {
  readonly handler: McpHttpHandler;
  readonly serve: ReturnType<typeof toNodeHandler>;
  /** What the fast path answers this view's requests from (the same view and diagnostics as `handler`). */
  readonly fast: SkillsHandlerContext;
}

/** Serves the runtime over Streamable HTTP at `http://<host>:<port>/mcp`; `/healthz` and `/readyz` beside it. */
export class HttpAdapter implements Adapter {
  readonly ended: Promise<string> = new Promise(() => undefined); // only a signal ends an HTTP server
  readonly #endpoint: HttpEndpoint;
  readonly #auth: HttpAuth;
  #server: Server | undefined;
  #tokens: HttpTokens | undefined;
  #oauth: OAuthGate | undefined;
  #metrics: HttpMetrics | undefined;
  /** Responses served to OAuth tokens, with when their token expires (ms epoch). */
  readonly #expiring = new Map<ServerResponse, number>();
  #sweep: NodeJS.Timeout | undefined;
  readonly #handlers = new Map<Visibility | undefined, ViewHandler>();
  #logger: Runtime['logger'] | undefined;
  /** MCP requests served, and how many of them the fast path answered (logged when the server stops). */
  #requests = 0;
  #fastAnswers = 0;

  constructor(endpoint: HttpEndpoint, auth: HttpAuth = {}) {
    this.#endpoint = endpoint;
    this.#auth = auth;
  }

  /**
   * @throws SkillsServeError `CONFIG_INVALID` when the tokens file cannot be read or parsed; the listen error
   *   (`EADDRINUSE`, `EACCES`) when the port cannot be bound.
   */
  async start(runtime: Runtime): Promise<void> {
    const { logger } = runtime;
    this.#logger = logger;
    const { host, port } = this.#endpoint;
    const { token, tokensFile } = this.#auth;
    if (tokensFile !== undefined) {
      try {
        this.#tokens = new HttpTokens(
          tokensFile,
          (message) => logger.warn({ event: 'http-tokens-unusable' }, message),
          (views) => {
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
          },
        );
      } catch (error) {
        throw new SkillsServeError('CONFIG_INVALID', `--http-tokens ${tokensFile}: ${(error as Error).message}`);
      }
    }
    const { oauth } = this.#auth;
    let claimViews: ClaimViews | undefined;
    if (oauth !== undefined) {
      if (oauth.audience === undefined && isWildcardHost(host))
        throw new SkillsServeError(
          'CONFIG_INVALID',
          `--auth-issuer on a wildcard address (${host}) needs --auth-audience: the URL clients reach this server at`,
        );
      if (oauth.claimsFile !== undefined) {
        try {
          claimViews = new ClaimViews(oauth.claimsFile);
        } catch (error) {
          throw new SkillsServeError(
            'CONFIG_INVALID',
            `--auth-claims ${oauth.claimsFile}: ${(error as Error).message}`,
          );
        }
      }
    }
    const handlerFor = (view: Visibility | undefined): ViewHandler => {
      let entry = this.#handlers.get(view);
      if (entry === undefined) {
        // No connection to push diagnostics to: they go with each first skills/list page, as far as the view sees
        // (worked out once per snapshot: a new git commit's roots come with a new snapshot).
        let memo: { snapshot: Snapshot; diagnostics: readonly PublicDiagnostic[] } | undefined;
        const diagnostics = (): readonly PublicDiagnostic[] => {
          const snapshot = runtime.store.current;
          if (memo?.snapshot !== snapshot)
            memo = { snapshot, diagnostics: diagnosticsInView(snapshot.diagnostics, runtime.roots, view) };
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
        const fast: SkillsHandlerContext = {
          ...runtime.handlers,
          ...(view === undefined ? {} : { visibility: view }),
          diagnostics,
        };
        this.#handlers.set(view, (entry = { handler, serve, fast }));
      }
      return entry;
    };
    handlerFor(undefined);
    const metrics = new HttpMetrics(
      runtime,
      () => this.#handlers.size,
      oauth !== undefined
        ? AUTH_FAILURES
        : token !== undefined || tokensFile !== undefined
          ? STATIC_TOKEN_FAILURES
          : [],
    );
    this.#metrics = metrics;
    runtime.on('changed', (change) => {
      for (const [view, { handler }] of this.#handlers) announce(handler, change, view);
    });
    const loopback = isLoopbackHost(host);
    const hostGuard = loopback ? localhostHostValidation() : undefined;
    const originGuard = loopback ? localhostOriginValidation() : undefined;
    if (!loopback && token === undefined && tokensFile === undefined && oauth === undefined) {
      logger.warn(
        { event: 'http-open', host },
        `serving on non-loopback address ${host} without --http-token, --http-tokens or --auth-issuer: anyone who can reach the port can read every skill`,
      );
    }
    /** Each issuer's last state logged: a change is logged once, not at every probe. */
    const announced = new Map<string, 'discovered' | 'unreachable'>();
    const discoverIssuers = (): void => {
      void this.#oauth?.discover().then((issuers) => {
        for (const { issuer, problem } of issuers) {
          const state = problem === undefined ? 'discovered' : 'unreachable';
          if (announced.get(issuer) === state) continue;
          announced.set(issuer, state);
          if (problem === undefined) logger.info({ event: 'auth-issuer-discovered', issuer }, `${issuer} discovered`);
          else
            logger.warn(
              { event: 'auth-issuer-unreachable', issuer },
              `${problem}; tokens it issued fail until it answers`,
            );
        }
      });
    };
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === METRICS_PATH) {
        void metrics.registry.metrics().then((text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        });
        return;
      }
      if (path === HEALTH_PATH || path === LIVE_PATH || path === READY_PATH) {
        const snapshot = runtime.store.current;
        // Behind --auth-issuer, ready only once an issuer is discovered (before, every token is refused); asking
        // meanwhile tries again, so a probe, not only a request, finds an issuer that comes up late.
        const issuers = this.#oauth?.discovered ?? 'all';
        if (issuers !== 'all') discoverIssuers();
        const status = snapshot.generation === 0 ? 'indexing' : issuers === 'none' ? 'issuer_unreachable' : 'ready';
        res.writeHead(path === READY_PATH && status !== 'ready' ? 503 : 200, { 'content-type': 'application/json' });
        // With per-team tokens or OAuth, even the number of skills is not told to unauthenticated callers.
        const counts =
          this.#tokens === undefined && this.#oauth === undefined ? { skills: snapshot.ordered.length } : {};
        res.end(JSON.stringify({ status, ...counts, generation: snapshot.generation }));
        return;
      }
      const gate = this.#oauth;
      if (gate !== undefined && gate.metadataPaths.has(path ?? '')) {
        // RFC 9728 §3.2: a JSON document; clients in browsers fetch it cross-origin.
        res.writeHead(200, {
          'content-type': 'application/json',
          'cache-control': 'max-age=3600',
          'access-control-allow-origin': '*',
        });
        res.end(gate.metadataBody);
        return;
      }
      if (path !== MCP_PATH) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `not found; MCP is served at ${MCP_PATH}` }));
        return;
      }
      // Counted and logged from here on: a request the Host or Origin check refuses too.
      const exchange: Exchange = {
        started: performance.now(),
        subject: undefined,
        refused: undefined,
        seen: {},
        body: undefined,
      };
      res.once('close', () => this.#finished(req, res, exchange));
      if (hostGuard !== undefined && !hostGuard(req, res)) return;
      if (originGuard !== undefined && !originGuard(req, res)) return;
      const authorization = authorizationOf(req);
      const authorized = this.#authorize(authorization);
      if (authorized !== false) {
        if (authorized !== true) exchange.subject = authorized.name;
        this.#serveMcp(req, res, handlerFor(authorized === true ? undefined : authorized), exchange);
        return;
      }
      if (gate === undefined) {
        exchange.refused = authorization === undefined ? 'missing' : 'unknown_token';
        metrics.authFailures.inc({ reason: exchange.refused });
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="skills-serve"' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32001, message: 'Unauthorized: send Authorization: Bearer <token>' },
          }),
        );
        return;
      }
      const admit = (admitted: Admitted | Denied): void => {
        if (!admitted.ok) {
          exchange.refused = admitted.reason;
          metrics.authFailures.inc({ reason: admitted.reason });
          const refusal = gate.refusal(admitted.reason);
          res.writeHead(refusal.status, refusal.headers);
          res.end(refusal.body);
          return;
        }
        // A listen stream lasts no longer than the token it was opened with (checked every EXPIRY_SWEEP_MS: one
        // timer for all, not one per request; the entry goes when the response closes, in #finished).
        this.#expiring.set(res, admitted.expiresAt);
        exchange.subject = admitted.subject;
        this.#serveMcp(req, res, handlerFor(admitted.view), exchange);
      };
      // A token seen before is answered in this turn; only a new one waits for its signature or introspection.
      const admitted = gate.authorize(authorization, req.socket);
      if (admitted instanceof Promise) void admitted.then(admit);
      else admit(admitted);
    });
    this.#server = server;
    if (oauth !== undefined) {
      this.#sweep = setInterval(() => {
        const now = Date.now();
        for (const [res, expiresAt] of this.#expiring) {
          if (expiresAt > now) continue;
          this.#expiring.delete(res);
          endExpired(res);
        }
      }, EXPIRY_SWEEP_MS).unref();
    }
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
    // audience defaults to the URL just bound, so `--http 127.0.0.1:0` works.
    if (oauth !== undefined) this.#oauth = new OAuthGate(oauth, oauth.audience ?? url, claimViews);
    logger.info({ event: 'serving', transport: 'http', url, port: actualPort }, `serving on ${url}; indexing`);
    const gate = this.#oauth;
    if (gate !== undefined) {
      logger.info(
        { event: 'auth-resource', resource: gate.audience, metadata: gate.metadataUrl },
        `OAuth resource ${gate.audience}; metadata at ${gate.metadataUrl}`,
      );
      discoverIssuers();
    }
  }

  /** Serves one authorized MCP request with a view's handler: the fast path, or the SDK's. */
  #serveMcp(req: IncomingMessage, res: ServerResponse, { serve, fast }: ViewHandler, exchange: Exchange): void {
    const logger = this.#logger;
    this.#requests++;
    if (req.headers['mcp-method'] === 'subscriptions/listen') {
      this.#metrics?.listenStreams.inc();
      res.once('close', () => this.#metrics?.listenStreams.dec());
    }
    void tryFastPath(req, res, fast, exchange.seen).then(
      (declined) => {
        if (declined === undefined) {
          this.#fastAnswers++;
          return undefined;
        }
        exchange.body = declined.body;
        return declined.body === undefined ? serve(req, res) : serve(replayRequest(req, declined.body), res);
      },
      (error: unknown) => {
        logger?.warn({ event: 'request-failed', err: error }, 'HTTP request failed');
        // Headers already sent (a fast answer failed half way): the response cannot be finished, so it is cut.
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  /** Counts a finished MCP request and writes its access log line (never the token). */
  #finished(req: IncomingMessage, res: ServerResponse, exchange: Exchange): void {
    this.#expiring.delete(res);
    const method = exchange.seen.method ?? methodLabel(req.headers['mcp-method'], exchange.body);
    const outcome = res.writableFinished ? outcomeLabel(res.statusCode) : 'aborted';
    const seconds = (performance.now() - exchange.started) / 1000;
    const labels = { method, outcome };
    this.#metrics?.requests.inc(labels);
    this.#metrics?.latency.observe(labels, seconds);
    this.#logger?.info(
      {
        event: 'request',
        method,
        outcome,
        status: res.statusCode,
        ms: Math.round(seconds * 1e5) / 100,
        ...(exchange.subject === undefined ? {} : { subject: exchange.subject }),
        ...(exchange.refused === undefined ? {} : { refused: exchange.refused }),
      },
      'request',
    );
  }

  /**
   * Who a request is: `true` (sees everything), a view (`--http-tokens`), or `false` (unauthorized).
   */
  #authorize(header: string | undefined): Visibility | boolean {
    const { token, oauth } = this.#auth;
    if (this.#tokens === undefined && token === undefined) return oauth === undefined;
    if (token !== undefined && hasBearerToken(header, token)) return true;
    const given = bearerOf(header);
    return (given === undefined ? undefined : this.#tokens?.viewOf(given)) ?? false;
  }

  /** Stops accepting connections, finishes requests in flight, closes listen streams, within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#tokens?.close();
    clearInterval(this.#sweep);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await Promise.race([
      Promise.allSettled([...[...this.#handlers.values()].map(({ handler }) => handler.close()), closed]),
      timer,
    ]);
    server.closeAllConnections();
    this.#logger?.info(
      { event: 'http-stopped', requests: this.#requests, fastAnswers: this.#fastAnswers },
      `served ${this.#requests} MCP requests`,
    );
  }
}

/** Why a request is refused with only `--http-token`/`--http-tokens`: no header, or a token none of them is. */
const STATIC_TOKEN_FAILURES = ['missing', 'unknown_token'] as const;

/**
 * Ends a response whose token has expired. A listen stream (`subscriptions/listen`: server-sent events, written an
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

/** What is noted of one MCP request while it is served, for its metrics and access log line. */
interface Exchange {
  readonly started: number;
  /** The token's subject (OAuth `sub` or `client_id`), or the `--http-tokens` entry's name. */
  subject: string | undefined;
  /** Why the request was refused (`skills_serve_auth_failures_total`'s reason), when it was. */
  refused: AuthFailure | (typeof STATIC_TOKEN_FAILURES)[number] | undefined;
  /** The method, when the fast path parsed the request. */
  readonly seen: { method?: string };
  /** The body the fast path read and handed on. */
  body: Buffer | undefined;
}

/** Tells one handler's listen streams about a change, as far as its view may see it. */
function announce(handler: McpHttpHandler, { diff }: RuntimeChange, view: Visibility | undefined): void {
  const seen = view === undefined ? () => true : (uri: string) => isVisibleUri(view, uri);
  const touchesView = view === undefined || diff.skillsChanged.some(seen);
  if (diff.listChanged && touchesView) handler.notify.resourcesChanged();
  for (const uri of diff.updated) if (seen(uri)) handler.notify.resourceUpdated(uri);
}
