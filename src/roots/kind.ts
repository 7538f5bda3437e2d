/**
 * The one shape of every kind of root (docs/ARCHITECTURE.md, "Sources"): how its arguments are parsed and described,
 * how a root of it is opened to a directory for the index, refreshed, and let go, where it keeps what it persists,
 * and the provenance it publishes. A kind is a folder of its own (`folder/`, `git/`) registered in `kinds.ts`; the
 * rest of the server (`sources.ts`, the runtime, metrics, the commands) only speaks of kinds through this interface.
 */
import type { RootSpec } from '../index/types.js';

/** The logging a root does (a pino logger fits). Objects carry no secret. */
export interface RootLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** What a root is given when it is made. */
export interface RootContext<Settings> {
  /**
   * The cache directory, resolved once (`cache-dir.ts`): a kind keeps what it persists in a folder of its own,
   * `<cache>/<kind name>/` (docs/ARCHITECTURE.md, "Caches").
   */
  readonly cacheDir: string;
  /** The kind's settings (its command-line flags: `RootKindSettings` in `kinds.ts`); `undefined` for a kind without. */
  readonly settings: Settings;
  readonly logger: RootLogger | undefined;
}

/**
 * A newer version a root refuses to serve while it keeps serving the one before (a git commit without an allowed
 * signature): logged by the kind, counted (`RootKind.refusalMetric`) and told by `/readyz`.
 */
export interface RootRefusal {
  /** Stable code (`git-signature-refused`). */
  readonly code: string;
  /** The root as its kind describes it in logs, credential-free (`<url>#<ref>:<subdir>`): one per root. */
  readonly root: string;
  /** The version refused (a commit id). */
  readonly refused: string;
  /** The version still served (a commit id). */
  readonly serving: string;
  /** Why, for people (`it is not signed`). */
  readonly reason: string;
}

/** What a followed root tells its owner (`sources.ts`). */
export interface RootListener {
  /**
   * A new version is served from another directory: `root` (its provenance in `meta`). The owner indexes it, swaps
   * it in, and calls `release` once no read uses the old version any more (its directory may then be deleted).
   */
  replaced(root: RootSpec, release: () => Promise<void>): void;
  /** A check for a new version ended (a git branch poll): whether it went through. */
  refreshed(ok: boolean): void;
  /** A newer version was refused; the one before stays served. */
  refused(refusal: RootRefusal): void;
}

/**
 * What a root serves now, for `/metrics` (docs/operations.md, "Metrics and access log"): a kind whose roots have
 * versions (a git commit) says which, since when, and whether it is a fallback.
 */
export interface RootStatus {
  /** The version served (a git root's commit id). */
  readonly version: string;
  /** When that version was fetched into the cache (ms since the epoch), when known. */
  readonly fetchedAt: number | undefined;
  /**
   * Whether it is a fallback: the root's origin could not be reached (at start, or at its last check) and the copy
   * from the cache is served. Cleared by the next check that goes through.
   */
  readonly stale: boolean;
}

/** One root being served: opened once, followed or not, stopped once. */
export interface RootSource {
  /**
   * Opens the root: a folder as it is, a git commit fetched (or found in the cache) and materialized.
   *
   * @returns the root to index: its directory, prefix and provenance (`meta`, published in every entry's `_meta`).
   * @throws SkillsServeError (`ROOT_UNUSABLE`, exit 1; `CONFIG_INVALID`, exit 2) naming the root when it cannot be
   *   served.
   */
  start(): Promise<RootSpec>;
  /**
   * Whether its directory changes in place (a folder: watched for changes) rather than being replaced by a new one
   * that is announced through {@link RootListener.replaced} (a git tree is never watched).
   */
  readonly changesInPlace: boolean;
  /** Whether nothing it serves can change, even after a restart (a git tag or commit); valid after `start`. */
  readonly pinned: boolean;
  /** When its next check for a new version is due (ms since the epoch); `undefined` when none is scheduled. */
  readonly nextRefreshAt: number | undefined;
  /**
   * The newer version refused while an older one is served, until a newer one is served or the root is back at the
   * served one; `undefined` for none (and for kinds that never refuse). Valid after `start`, which may refuse one.
   */
  readonly refusal?: RootRefusal | undefined;
  /** What it serves now (valid after `start`); absent for a kind without versions (a folder). */
  status?(): RootStatus | undefined;
  /** Follows the root from now on: new versions and refreshes are told to `listener`. */
  follow(listener: RootListener): void;
  /** Stops following and cancels work in flight; resolves once it has ended. Idempotent. */
  stop(): Promise<void>;
}

/**
 * A kind of root.
 *
 * @typeParam Spec what one argument of the kind parses to, tagged with the kind's name (`{ kind: 'git', git }`).
 * @typeParam Settings the kind's own settings, or `undefined`.
 */
export interface RootKind<Spec extends { readonly kind: string }, Settings> {
  /** Its name: the `kind` of its specs, the key of its settings and its cache folder (`<cache>/<name>/`). */
  readonly name: Spec['kind'];
  /**
   * Parses a root argument when it is of this kind (kinds are asked in `kinds.ts` order; the folder kind takes
   * whatever is left).
   *
   * @param arg the argument as typed, `prefix=` included.
   * @param cwd directory relative paths resolve against.
   * @returns the spec, or `undefined` when the argument is not of this kind.
   * @throws RangeError naming the accepted forms when it is of this kind but malformed (never repeating a secret).
   */
  parse(arg: string, cwd: string): Spec | undefined;
  /**
   * Checks what can be checked before anything starts (a folder exists and is a directory).
   *
   * @param arg the argument as typed, for the message.
   * @throws SkillsServeError `ROOT_UNUSABLE` naming the root.
   */
  check?(spec: Spec, arg: string): void;
  /** The root as people read it in logs, without credentials (`acme=git+https://host/repo.git#main:skills`). */
  describe(spec: Spec): string;
  /**
   * The directory served, when it is known without opening the root (a folder): `check --verify-cache` verifies its
   * digest cache file.
   */
  fixedDirectory?(spec: Spec): string;
  /**
   * Why `check --verify-cache` leaves out roots of a kind without a fixed directory: printed after each such root,
   * which its JSON report lists under `<name>Roots` (`gitRoots`).
   */
  readonly notVerified?: string;
  /** The `/metrics` counter of its refreshes by outcome (`ok`, `failed`), for a kind that checks for new versions. */
  readonly refreshMetric?: { readonly name: string; readonly help: string };
  /** The `/metrics` counter of refused versions by `root` ({@link RootRefusal}), for a kind that refuses some. */
  readonly refusalMetric?: { readonly name: string; readonly help: string };
  /**
   * Makes the root of `spec` (nothing runs before {@link RootSource.start}).
   *
   * @param context the cache directory, the kind's settings and the logger.
   */
  source(spec: Spec, context: RootContext<Settings>): RootSource;
}

/**
 * The segments of an organizational prefix (`acme/billing` → `['acme', 'billing']`).
 *
 * @returns the segments, or `undefined` when one is empty, `.`, `..` or holds NUL.
 */
export function prefixSegments(text: string): string[] | undefined {
  const segments = text.split('/');
  return segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\0'))
    ? undefined
    : segments;
}

/**
 * Splits `[<prefix>=]<text>` for a kind whose arguments `claims` recognizes (`git+…`): an argument starting with `/`
 * or `.` is a folder, whatever follows an `=`.
 *
 * @param example an argument of the kind, for the message (`git+https://host/repo.git`).
 * @returns the prefix segments and the rest, or `undefined` when the argument is not of the kind.
 * @throws RangeError for a malformed prefix.
 */
export function splitPrefixed(
  arg: string,
  claims: (text: string) => boolean,
  example: string,
): { readonly prefix: readonly string[]; readonly text: string } | undefined {
  if (claims(arg)) return { prefix: [], text: arg };
  const equals = arg.indexOf('=');
  if (equals <= 0 || arg.startsWith('/') || arg.startsWith('.') || !claims(arg.slice(equals + 1))) return undefined;
  const prefixText = arg.slice(0, equals);
  const prefix = prefixSegments(prefixText);
  if (prefix === undefined) {
    throw new RangeError(
      `root "${prefixText}=…" must have a prefix of non-empty "/"-separated names (e.g. acme/billing=${example})`,
    );
  }
  return { prefix, text: arg.slice(equals + 1) };
}

/**
 * A root whose implementation is loaded when it is opened (a kind's code stays out of the start of a server that has
 * no root of that kind: docs/ARCHITECTURE.md, "Answering ahead").
 *
 * @param changesInPlace {@link RootSource.changesInPlace} of the roots `load` makes.
 * @param load loads the implementation and makes the root (called once, by `start`).
 * @returns a root that behaves as the loaded one; before `start`, it is not pinned and has no refresh due, and `stop`
 *   has nothing to stop.
 */
export function deferredSource(changesInPlace: boolean, load: () => Promise<RootSource>): RootSource {
  let loaded: RootSource | undefined;
  let stopped = false;
  return {
    changesInPlace,
    async start() {
      loaded ??= await load();
      if (stopped) await loaded.stop();
      return loaded.start();
    },
    get pinned() {
      return loaded?.pinned ?? false;
    },
    get nextRefreshAt() {
      return loaded?.nextRefreshAt;
    },
    get refusal() {
      return loaded?.refusal;
    },
    status() {
      return loaded?.status?.();
    },
    follow(listener) {
      if (loaded === undefined) throw new Error('a root is followed only once it has started');
      loaded.follow(listener);
    },
    async stop() {
      stopped = true;
      await loaded?.stop();
    },
  };
}
