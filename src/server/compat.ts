/**
 * Surfaces for hosts without the Skills extension (`--compat auto|on|off`): server `instructions` carrying a compact
 * catalog, the read-only tools of `compat-tools.ts`, and one prompt per skill that brings its `SKILL.md` into the
 * conversation. Wires the pure parts (`compat-catalog.ts`) to an `McpServer`; everything reads the current snapshot.
 *
 * Who is offered tools and prompts: `on` every client; `auto` clients that do not declare
 * `extensions["io.modelcontextprotocol/skills"]` (2025 era: in `initialize`; 2026-07-28: in each request's
 * `_meta` envelope); `off` nobody. The `tools` and `prompts` capabilities are advertised whenever compat is not `off`
 * (capabilities are fixed before the client's are known): a client that declares the extension gets empty lists and
 * -32602 for calls. Instructions are sent in `auto` and `on` alike; a host with the extension may ignore them.
 */
import { CLIENT_CAPABILITIES_META_KEY, McpServer, ProtocolError, ProtocolErrorCode, type GetPromptResult, type ServerContext as RequestContext } from '@modelcontextprotocol/server';
import type { SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { CompatMode } from '../config.js';
import { SkillsServeError } from '../errors.js';
import { pageOf } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { Snapshot } from '../index/types.js';
import type { Logger } from '../log.js';
import { assignPromptNames, buildInstructions, declaresSkillsExtension, type PromptSlot } from './compat-catalog.js';
import { callCompatTool, COMPAT_TOOLS, type ToolDeps } from './compat-tools.js';
import type { Era } from './subscriptions.js';

/** Longest a new connection's `initialize` / `server/discover` waits for the first index build, for the catalog (ms). */
export const COMPAT_CATALOG_WAIT_MS = 300;

/** What the compat surfaces are built from. */
export interface CompatContext {
  readonly mode: CompatMode;
  readonly store: SnapshotStore;
  /** The source `resources/read` serves from: tools and prompts read through it, verified. */
  readonly source: SkillSource;
  /** Entries per `list_skills` and `prompts/list` page. */
  readonly pageSize: number;
  readonly logger: Logger;
  /** Overrides {@link COMPAT_CATALOG_WAIT_MS}. */
  readonly catalogWaitMs?: number;
}

/**
 * The compat surfaces of one server process: shared by every connection, stateless apart from the first-build wait
 * and a per-snapshot memo of prompt names.
 */
export class CompatSurfaces {
  readonly #context: CompatContext;
  #firstWait: Promise<void> | undefined;
  readonly #prompts = new WeakMap<Snapshot, { readonly slots: readonly PromptSlot[]; readonly byName: ReadonlyMap<string, PromptSlot> }>();

  constructor(context: CompatContext) {
    this.#context = context;
  }

  /** Whether any client may be offered the surfaces (`mode` is not `off`). */
  get enabled(): boolean {
    return this.#context.mode !== 'off';
  }

  /**
   * The `instructions` for a connection being built: the catalog of the current snapshot. Waits for the first index
   * build at most {@link COMPAT_CATALOG_WAIT_MS} from the first call (one shared deadline, so a `server/discover`
   * probe and the `initialize` fallback after it are not held back twice); if the build is still running then, the
   * text points to `list_skills` instead.
   *
   * @returns the text, or `undefined` in `off` mode.
   */
  async instructions(): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const { store } = this.#context;
    this.#firstWait ??= waitAtMost(store.ready(), this.#context.catalogWaitMs ?? COMPAT_CATALOG_WAIT_MS);
    await this.#firstWait;
    const snapshot = store.current;
    return buildInstructions(snapshot.generation === 0 ? undefined : snapshot.ordered);
  }

  /**
   * Declares the `tools` and `prompts` capabilities on `server` and serves `tools/list`, `tools/call`, `prompts/list`
   * and `prompts/get` from the current snapshot. Does nothing in `off` mode. Call before connecting.
   *
   * @param server a fresh, unconnected server.
   * @param era the era it serves (decides where the client's capabilities are read).
   */
  attach(server: McpServer, era: Era): void {
    if (!this.enabled) return;
    const low = server.server;
    low.registerCapabilities({ tools: { listChanged: true }, prompts: { listChanged: true } });
    const offered = (ctx: RequestContext): boolean => this.offeredTo(server, era, ctx);
    const deps = this.#toolDeps();

    low.setRequestHandler('tools/list', (_request, ctx) => ({ tools: offered(ctx) ? [...COMPAT_TOOLS] : [] }));
    low.setRequestHandler('tools/call', async (request, ctx) => {
      const { name } = request.params;
      const result = offered(ctx) ? await callCompatTool(name, request.params.arguments, { ...deps, read: (uri) => this.#context.source.read(uri, ctx) }) : undefined;
      if (result === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const tool = COMPAT_TOOLS.find((candidate) => candidate.name === name);
      return low.projectCallToolResult(result, tool?.outputSchema);
    });

    low.setRequestHandler('prompts/list', async (request, ctx) => {
      if (!offered(ctx)) return { prompts: [] };
      const { slots } = this.#promptsOf(await this.#context.store.ready());
      let page;
      try {
        page = pageOf(slots, request.params?.cursor, this.#context.pageSize, (slot) => slot.skill.uri);
      } catch (error) {
        if (error instanceof SkillsServeError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
        throw error;
      }
      const prompts = page.items.map(({ name, skill }) => ({ name, description: skill.description }));
      return page.nextCursor === undefined ? { prompts } : { prompts, nextCursor: page.nextCursor };
    });
    low.setRequestHandler('prompts/get', async (request, ctx) => {
      const { name } = request.params;
      const slot = offered(ctx) ? this.#promptsOf(await this.#context.store.ready()).byName.get(name) : undefined;
      if (slot === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return this.#promptResult(slot, ctx);
    });
  }

  /**
   * Whether the client behind `ctx` is offered the tools and prompts: always in `on`, never in `off`, and in `auto`
   * when it does not declare the Skills extension.
   *
   * @param ctx the request context (2026-07-28: its envelope carries the capabilities); omitted for notifications,
   *   where a 2026-07-28 connection counts as offered (its capabilities are only known per request).
   */
  offeredTo(server: McpServer, era: Era, ctx?: RequestContext): boolean {
    if (this.#context.mode !== 'auto') return this.enabled;
    if (era === 'modern') {
      const envelope = ctx?.mcpReq.envelope as Record<string, unknown> | undefined;
      return ctx === undefined || !declaresSkillsExtension(envelope?.[CLIENT_CAPABILITIES_META_KEY]);
    }
    // The 2025 era declares capabilities once, in `initialize`; the SDK keeps them on the connection's server.
    return !declaresSkillsExtension(server.server.getClientCapabilities());
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
        return other === undefined || other.name !== slot.name || other.skill.uri !== slot.skill.uri || other.skill.description !== slot.skill.description;
      })
    );
  }

  #promptsOf(snapshot: Snapshot): { readonly slots: readonly PromptSlot[]; readonly byName: ReadonlyMap<string, PromptSlot> } {
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
    const resource =
      'text' in read
        ? { uri, mimeType: read.mimeType ?? 'text/markdown', text: read.text }
        : { uri, mimeType: read.mimeType ?? 'text/markdown', blob: Buffer.from(read.bytes).toString('base64') };
    const intro = `Use the "${skill.name}" skill (${uri}) for this task. Its SKILL.md follows; read the other files it mentions with the read_skill_file tool.`;
    return {
      description: skill.description,
      messages: [
        { role: 'user', content: { type: 'text', text: intro } },
        { role: 'user', content: { type: 'resource', resource } },
      ],
    };
  }

  #toolDeps(): Omit<ToolDeps, 'read'> {
    const { store, pageSize, logger } = this.#context;
    return {
      snapshot: () => store.ready(),
      pageSize,
      onUnexpected: (error, uri) => logger.error({ err: error, uri }, 'compat tool read failed'),
    };
  }
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
