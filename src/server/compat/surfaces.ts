/**
 * Surfaces for hosts without the Skills extension (`--compat auto|on|off`): server `instructions` carrying a compact
 * catalog, the read-only tools of `compat-tools.ts`, and one prompt per skill that brings its `SKILL.md` into the
 * conversation. Wires the pure parts (`compat-catalog.ts`) to an `McpServer`; everything reads the current snapshot.
 *
 * Who is offered tools and prompts: `on` every client; `off` nobody; `auto` every connection until its client shows
 * it is an extension host, by what it does: it calls `skills/list` or `skills/get`, or declares
 * `extensions["io.modelcontextprotocol/skills"]` (2025 era: in `initialize`; 2026-07-28: in the `_meta` envelope
 * of any request that reaches this server's handlers). From then on that connection gets empty `tools/list` and
 * `prompts/list` and -32602 for calls, and is sent `notifications/tools/list_changed` and
 * `notifications/prompts/list_changed` once, so that it drops what it listed before. The `tools` and `prompts`
 * capabilities are advertised whenever compat is not `off` (capabilities are fixed before the client's are known).
 * Instructions are sent in `auto` and `on` alike; a host with the extension may ignore them.
 */
import {
  type GetPromptResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext as RequestContext,
} from '@modelcontextprotocol/server';
import { SKILLS_GET_METHOD, SKILLS_LIST_METHOD, type SkillSource } from '@modelcontextprotocol/server/ext/skills';

import type { CompatMode } from '../../config.js';
import { DEFAULT_INSTRUCTIONS_MAX, DEFAULT_INSTRUCTIONS_WAIT_MS } from '../../config.js';
import { asProtocolErrors } from '../../errors.js';
import { pageOf } from '../../index/snapshot.js';
import type { SnapshotStore } from '../../index/store.js';
import type { Snapshot } from '../../index/types.js';
import type { Logger } from '../../log.js';
import {
  declaresSkillsExtension,
  envelopeCapabilities,
  type Era,
  type ExtensionRequestHook,
} from '../../wire/protocol.js';
import { viewOf, type Visibility } from '../visibility.js';
import { assignPromptNames, buildInstructions, collapseWhitespace, type PromptSlot } from './catalog.js';
import { SkillSearch } from './search.js';
import { callCompatTool, COMPAT_TOOLS, type ToolDeps } from './tools.js';

/**
 * Prompts per `prompts/list` page, whatever `--page-size` says: Gemini CLI 0.61.0 reads only the first page (it does
 * not follow `nextCursor`), so every prompt of a catalog of up to this many skills is in that page.
 */
export const PROMPTS_PAGE_SIZE = 10_000;

/** What the compat surfaces are built from. */
export interface CompatContext {
  readonly mode: CompatMode;
  readonly store: SnapshotStore;
  /** The source `resources/read` serves from: tools and prompts read through it, verified. */
  readonly source: SkillSource;
  /** Entries per `list_skills` page. */
  readonly pageSize: number;
  /** Bound of the instructions text (default {@link DEFAULT_INSTRUCTIONS_MAX}). */
  readonly instructionsMax?: number;
  readonly logger: Logger;
  /**
   * Longest a new connection's `initialize` / `server/discover` waits for the first index build, for the catalog
   * (ms; `--instructions-wait`, default {@link DEFAULT_INSTRUCTIONS_WAIT_MS}).
   */
  readonly catalogWaitMs?: number;
}

/** What one connection's client has shown about itself (`--compat auto`). */
interface ConnectionState {
  /** It called `skills/list` or `skills/get`, or declared the extension: it is offered no tools or prompts. */
  extensionHost: boolean;
  /** It was answered a non-empty `tools/list` or `prompts/list`: it must be told when they are withdrawn. */
  listed: boolean;
}

/**
 * The compat surfaces of one server process: shared by every connection. Holds the first-build wait, a per-snapshot
 * memo of prompt names, the search index, and what each connection's client has shown about itself.
 */
export class CompatSurfaces {
  readonly #context: CompatContext;
  #firstWait: Promise<void> | undefined;
  readonly #prompts = new WeakMap<
    Snapshot,
    { readonly slots: readonly PromptSlot[]; readonly byName: ReadonlyMap<string, PromptSlot> }
  >();
  readonly #connections = new WeakMap<McpServer, ConnectionState>();
  /** The instructions text of each snapshot as a view sees it (`viewOf` gives one object per snapshot and view). */
  readonly #instructions = new WeakMap<Snapshot, string>();
  readonly #search: SkillSearch;

  /** A failure no prompt handler expected: logged with its stack; the client gets -32603 `Internal error`. */
  readonly #unexpected = (error: unknown): void =>
    this.#context.logger.error({ event: 'request-failed', err: error }, 'a prompt request failed unexpectedly');

  constructor(context: CompatContext) {
    this.#context = context;
    this.#search = new SkillSearch();
  }

  /** Whether any client may be offered the surfaces (`mode` is not `off`). */
  get enabled(): boolean {
    return this.#context.mode !== 'off';
  }

  /**
   * The `instructions` for a connection being built: the catalog of the current snapshot. Waits for the first index
   * build at most `catalogWaitMs` from the first call (one shared deadline, so a `server/discover`
   * probe and the `initialize` fallback after it are not held back twice); if the build is still running then, the
   * text points to `list_skills` instead.
   *
   * @param view the client's view (`--http-tokens`): only the skills it sees are listed; `undefined` sees everything.
   * @returns the text, or `undefined` in `off` mode.
   */
  async instructions(view?: Visibility): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const { store } = this.#context;
    this.#firstWait ??= waitAtMost(store.ready(), this.#context.catalogWaitMs ?? DEFAULT_INSTRUCTIONS_WAIT_MS);
    await this.#firstWait;
    // Stateless HTTP builds a server per request: the text is worked out once per snapshot and view.
    const snapshot = viewOf(store.current, view);
    let text = this.#instructions.get(snapshot);
    if (text === undefined) {
      text = buildInstructions(
        snapshot.generation === 0 ? undefined : snapshot.ordered,
        this.#context.instructionsMax ?? DEFAULT_INSTRUCTIONS_MAX,
      );
      this.#instructions.set(snapshot, text);
    }
    return text;
  }

  /**
   * Declares the `tools` and `prompts` capabilities on `server` and serves `tools/list`, `tools/call`, `prompts/list`
   * and `prompts/get` from the current snapshot. Does nothing in `off` mode. Call before connecting.
   *
   * @param server a fresh, unconnected server: one connection.
   * @param era the era it serves (decides where the client's capabilities are read).
   * @param view the client's view (`--http-tokens`): tools and prompts name only the skills it sees.
   */
  attach(server: McpServer, era: Era, view?: Visibility): void {
    if (!this.enabled) return;
    const low = server.server;
    const state: ConnectionState = { extensionHost: false, listed: false };
    this.#connections.set(server, state);
    low.registerCapabilities({ tools: { listChanged: true }, prompts: { listChanged: true } });
    const offered = (ctx: RequestContext): boolean => this.offeredTo(server, era, ctx);
    const deps = this.#toolDeps(view);
    if (era === 'legacy') {
      const initialized = low.oninitialized;
      low.oninitialized = () => {
        initialized?.();
        if (declaresSkillsExtension(low.getClientCapabilities()))
          this.#becameExtensionHost(server, 'it declared the Skills extension in initialize');
      };
    }

    low.setRequestHandler('tools/list', (_request, ctx) => {
      if (!offered(ctx)) return { tools: [] };
      state.listed = true;
      return { tools: [...COMPAT_TOOLS] };
    });
    low.setRequestHandler('tools/call', async (request, ctx) => {
      const { name } = request.params;
      const result = offered(ctx)
        ? await callCompatTool(name, request.params.arguments, {
            ...deps,
            read: (uri) => this.#context.source.read(uri, ctx),
          })
        : undefined;
      if (result === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const tool = COMPAT_TOOLS.find((candidate) => candidate.name === name);
      return low.projectCallToolResult(result, tool?.outputSchema);
    });

    low.setRequestHandler('prompts/list', async (request, ctx) => {
      if (!offered(ctx)) return { prompts: [] };
      const { slots } = this.#promptsOf(viewOf(await this.#context.store.ready(), view));
      const page = await asProtocolErrors(
        () => pageOf(slots, request.params?.cursor, PROMPTS_PAGE_SIZE, (slot) => slot.skill.uri),
        this.#unexpected,
      );
      const prompts = page.items.map(({ name, skill }) => ({
        name,
        description: collapseWhitespace(skill.description),
      }));
      if (prompts.length > 0) state.listed = true;
      return page.nextCursor === undefined ? { prompts } : { prompts, nextCursor: page.nextCursor };
    });
    low.setRequestHandler('prompts/get', async (request, ctx) => {
      const { name } = request.params;
      const slot = offered(ctx)
        ? this.#promptsOf(viewOf(await this.#context.store.ready(), view)).byName.get(name)
        : undefined;
      if (slot === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return asProtocolErrors(() => this.#promptResult(slot, ctx), this.#unexpected);
    });
  }

  /**
   * What a connection's Skills-extension handlers call with each request they answer, so that a client calling
   * `skills/list` or `skills/get`, or declaring the extension in any request that reaches them (2026-07-28 `_meta`
   * envelope), is known as an extension host from then on.
   *
   * @param server the connection's server, already {@link CompatSurfaces.attach}ed.
   * @returns the hook (method name, request context), or `undefined` outside `--compat auto` (nothing to detect).
   */
  observe(server: McpServer): ExtensionRequestHook | undefined {
    if (this.#context.mode !== 'auto') return undefined;
    return (method, ctx) => {
      if (method === SKILLS_LIST_METHOD || method === SKILLS_GET_METHOD)
        this.#becameExtensionHost(server, `it called ${method}`);
      else if (declaresSkillsExtension(envelopeCapabilities(ctx)))
        this.#becameExtensionHost(server, 'it declared the Skills extension');
    };
  }

  /**
   * Whether the client behind `server` is offered the tools and prompts: always in `on`, never in `off`, and in `auto`
   * unless it has shown it is an extension host (see the module comment) or declares the extension in `ctx`.
   *
   * @param ctx the request context (2026-07-28: its envelope carries the capabilities); omitted for notifications.
   */
  offeredTo(server: McpServer, era: Era, ctx?: RequestContext): boolean {
    if (this.#context.mode !== 'auto') return this.enabled;
    if (this.#connections.get(server)?.extensionHost === true) return false;
    if (era === 'modern') {
      if (ctx !== undefined && declaresSkillsExtension(envelopeCapabilities(ctx))) {
        this.#becameExtensionHost(server, 'it declared the Skills extension');
        return false;
      }
      return true;
    }
    // The 2025 era declares capabilities once, in `initialize`; the SDK keeps them on the connection's server.
    return !declaresSkillsExtension(server.server.getClientCapabilities());
  }

  /**
   * Marks `server`'s client as an extension host and, if it was ever answered a non-empty list, tells it (once) that
   * its tools and prompts changed.
   */
  #becameExtensionHost(server: McpServer, reason: string): void {
    const state = this.#connections.get(server);
    if (state === undefined || state.extensionHost) return;
    state.extensionHost = true;
    this.#context.logger.debug(
      { reason },
      'the client uses the Skills extension: compat tools and prompts withdrawn for it',
    );
    if (!state.listed || !server.isConnected()) return;
    for (const send of [() => server.server.sendToolListChanged(), () => server.server.sendPromptListChanged()]) {
      try {
        send().catch((error: unknown) => this.#context.logger.debug({ err: error }, 'list_changed not delivered'));
      } catch (error) {
        this.#context.logger.debug({ err: error }, 'list_changed not delivered');
      }
    }
  }

  /** Whether the prompts clients list differ between two snapshots (names, skills or descriptions). */
  promptsChanged(previous: Snapshot, next: Snapshot): boolean {
    if (!this.enabled) return false;
    const before = this.#promptsOf(previous).slots;
    const after = this.#promptsOf(next).slots;
    return (
      before.length !== after.length ||
      before.some((slot, index) => {
        const other = after[index];
        return (
          other === undefined ||
          other.name !== slot.name ||
          other.skill.uri !== slot.skill.uri ||
          other.skill.description !== slot.skill.description
        );
      })
    );
  }

  #promptsOf(snapshot: Snapshot): {
    readonly slots: readonly PromptSlot[];
    readonly byName: ReadonlyMap<string, PromptSlot>;
  } {
    let prompts = this.#prompts.get(snapshot);
    if (prompts === undefined) {
      const slots = assignPromptNames(snapshot.ordered);
      prompts = { slots, byName: new Map(slots.map((slot) => [slot.name, slot])) };
      this.#prompts.set(snapshot, prompts);
    }
    return prompts;
  }

  async #promptResult({ skill }: PromptSlot, ctx: RequestContext): Promise<GetPromptResult> {
    const uri = skill.uri;
    const read = await this.#context.source.read(uri, ctx);
    if (read === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri} is no longer served`);
    const description = collapseWhitespace(skill.description);
    if ('text' in read)
      return {
        description,
        messages: [{ role: 'user', content: { type: 'text', text: promptText(skill.name, uri, read.text) } }],
      };
    // A SKILL.md that is not UTF-8 text cannot be quoted: it travels as a blob for the hosts that take one.
    const resource = {
      uri,
      mimeType: read.mimeType ?? 'text/markdown',
      blob: Buffer.from(read.bytes).toString('base64'),
    };
    return {
      description,
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Use the "${skill.name}" skill (${uri}) for this task. Its SKILL.md is not UTF-8 text; it follows as an embedded file.`,
          },
        },
        { role: 'user', content: { type: 'resource', resource } },
      ],
    };
  }

  #toolDeps(view: Visibility | undefined): Omit<ToolDeps, 'read'> {
    const { store, pageSize, logger } = this.#context;
    return {
      snapshot: async () => viewOf(await store.ready(), view),
      pageSize,
      search: this.#search,
      onUnexpected: (error, uri) => logger.error({ err: error, uri }, 'compat tool read failed'),
    };
  }
}

/**
 * The text of a skill's prompt, its only message: what to do, the skill's URI, then its `SKILL.md` verbatim. One text
 * message because Gemini CLI 0.61.0 keeps only the first message of a prompt, and only if it is text; an embedded
 * resource after it would reach Claude Code 2.1.332's model as a second copy of the same text.
 */
function promptText(name: string, uri: string, manifest: string): string {
  return `Use the "${name}" skill for this task: follow its SKILL.md (${uri}), quoted below. Read the other files it mentions with the read_skill_file tool.\n\n${manifest}`;
}

/** Resolves when `promise` settles or after `ms`, whichever comes first; the timer never keeps the process alive. */
function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
