/**
 * The resolved configuration: built once by `cli/main.ts` from argv and env, frozen, read by everything else
 * (docs/ARCHITECTURE.md, "Invariants": config is resolved once). Types and defaults only; the parsers of the flags
 * are in `cli/options.ts`.
 */
import { STRICTEST_TOOL_DESCRIPTION_CHARS } from './hosts/profiles.js';
import type { SymlinkPolicy } from './index/policy.js';
import type { LogLevel } from './log.js';
import type { RootKindSettings, SourceSpec } from './roots/kinds.js';

/** `--compat`: surfaces for hosts without the Skills extension (instructions, tools, prompts). */
export const COMPAT_MODES = ['auto', 'on', 'off'] as const;
export type CompatMode = (typeof COMPAT_MODES)[number];

/** `--cache-scope`: who may cache `skills/list` and `skills/get` results (2026-07-28 `cacheScope`). */
export const CACHE_SCOPES = ['private', 'public'] as const;
export type CacheScope = (typeof CACHE_SCOPES)[number];

/**
 * `--resources`: what `resources/list` lists: every served file (the default: Claude Code 2.1.332 and Gemini CLI
 * 0.61.0 offer listed resources as `@` mentions, took 10,000 of them, and put none in the model's context), or each
 * skill's `SKILL.md` only.
 */
export const RESOURCE_LIST_MODES = ['files', 'skills'] as const;
export type ResourceListMode = (typeof RESOURCE_LIST_MODES)[number];

export interface Config {
  /** Roots in command-line order (of every kind: `roots/kinds.ts`); earlier roots win conflicts. */
  readonly sources: readonly SourceSpec[];
  /** Each kind of root's settings: how git roots are fetched and followed (`--git-*`). */
  readonly rootKinds: RootKindSettings;
  /** The cache directory (`cache-dir.ts`: `--cache-dir`, …), resolved once; every persistent cache lives in it. */
  readonly cacheDir: string;
  /** `--ttl`: the `ttlMs` of 2026-07-28 `skills/list`/`skills/get` results; `undefined`: chosen from the sources. */
  readonly ttlMs: number | undefined;
  readonly cacheScope: CacheScope;
  readonly logLevel: LogLevel;
  /** Entries per `skills/list` and `resources/directory/read` page. */
  readonly pageSize: number;
  /**
   * Trust the digests of files unchanged since the last start (the persistent digest cache in the cache directory;
   * `--no-digest-cache` turns it off).
   */
  readonly digestCache: boolean;
  /** Follow changes on disk (`--no-watch` turns it off). */
  readonly watch: boolean;
  /** Poll every this many ms instead of using native file events (`--poll [ms]`); `undefined`: native. */
  readonly pollMs: number | undefined;
  /** `--strict`: any diagnostic of the first build makes startup fail (exit 1), for CI. */
  readonly strict: boolean;
  /** Symlink policy (`--symlinks within|skip|follow`). */
  readonly symlinks: SymlinkPolicy;
  /**
   * `--withhold-executables`: skills bundling executable content (scripts, shebangs, native binaries, execute bits)
   * are not served, each named by an `executables-withheld` diagnostic; by default they are served, flagged in
   * `_meta` (docs/security.md, "Executable content").
   */
  readonly withholdExecutables?: boolean;
  /** `--http [host:]port`: serve Streamable HTTP instead of stdio. */
  readonly http?: HttpEndpoint;
  /** `--http-token`: bearer token every HTTP request must carry. */
  readonly httpToken?: string;
  /** `--http-tokens FILE`: per-team tokens, each with the skill-path prefixes it may see. */
  readonly httpTokens?: string;
  /** `--auth-issuer` and the other `--auth-*` flags: OAuth 2.0 access tokens over HTTP. */
  readonly auth?: AuthSettings;
  /**
   * `auto`: offer compat tools/prompts only to clients that do not declare the extension; `on`: always; `off`: never.
   */
  readonly compat: CompatMode;
  /** `--catalog-max`: bound of `read_skill`'s description, the catalog it carries included (UTF-16 code units). */
  readonly catalogMax: number;
  /** `--resources`: what `resources/list` lists. */
  readonly resources: ResourceListMode;
}

/** The OAuth 2.0 resource server (`--auth-*`; docs/http.md, "Behind single sign-on"). */
export interface AuthSettings {
  /** `--auth-issuer`: trusted issuer identifiers, exactly as tokens carry them in `iss`. */
  readonly issuers: readonly string[];
  /** `--auth-audience`; `undefined`: the server's canonical URL `http://<host>:<port>/mcp`. */
  readonly audience: string | undefined;
  /** `--auth-scopes`: every token must carry all of them. */
  readonly scopes: readonly string[];
  /** `--auth-client-id` + `--auth-client-secret`: introspection of opaque tokens (RFC 7662). */
  readonly introspection: { readonly clientId: string; readonly clientSecret: string } | undefined;
  /** `--auth-claims FILE` (absolute): claims to views. */
  readonly claimsFile: string | undefined;
}

/** Default `--auth-scopes`. */
export const DEFAULT_AUTH_SCOPE = 'skills:read';

/** Where `--http` listens. */
export interface HttpEndpoint {
  readonly host: string;
  /** TCP port; 0 picks a free one (logged). */
  readonly port: number;
}

/** Host `--http <port>` binds to when none is given: this machine only. */
export const DEFAULT_HTTP_HOST = '127.0.0.1';

/** Default `--page-size`. */
export const DEFAULT_PAGE_SIZE = 100;
/** Polling interval used by a bare `--poll` (ms). */
export const DEFAULT_POLL_MS = 1000;

/**
 * Default `--catalog-max`: the strictest bound a released host puts on a tool description (Claude Code shows the model
 * the first 4,096 characters of one; `hosts/profiles.ts`).
 */
export const DEFAULT_CATALOG_MAX = STRICTEST_TOOL_DESCRIPTION_CHARS;
