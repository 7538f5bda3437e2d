/**
 * Surfaces for hosts without the Skills extension, and for the skills a host with it does not list (`--compat
 * auto|on|off`; docs/ARCHITECTURE.md, "Connections"): server `instructions`, the four read-only tools of `tools.ts`,
 * and one prompt per skill that brings its `SKILL.md` into the conversation. Wires the pure parts (`catalog.ts`) to an
 * `McpServer`; everything reads the current snapshot.
 *
 * The invariant: the model is shown each skill once, and can reach every served skill.
 * - **Instructions** go out before a host shows whether it lists skills itself, so they hold no catalog and name only
 *   the tools, which every connection keeps (`off`: none).
 * - **Tools** are offered to every connection. `read_skill`'s description carries the catalog of the skills the
 *   connection's host does not hold through the extension (`auto`), or of every skill (`on`).
 * - **Prompts**, one per such skill.
 * What a connection's host holds follows from what it was answered (`offer.ts`); a change reaches it as
 * `notifications/tools/list_changed` or `…/prompts/list_changed`, after any answer of that list in flight. Stateless
 * HTTP has no connection to follow: a 2025-era request is answered as a host without the extension; a 2026-07-28
 * request, whose host may list skills itself, gets no catalog and no prompts (in `auto`).
 */
import {
  type GetPromptResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext as RequestContext,
} from '@modelcontextprotocol/server';
import type { SkillSource } from '@modelcontextprotocol/server/ext/skills';

import type { CompatMode } from '../../config.js';
import { asProtocolErrors } from '../../errors.js';
import {
  assignPromptNames,
  collapseWhitespace,
  type PromptSlot,
  readSkillDescription,
  sharedAmong,
} from '../../hosts/catalog.js';
import { PROMPTS_PAGE_SIZE } from '../../hosts/profiles.js';
import { pageOf } from '../../index/snapshot.js';
import type { SnapshotStore } from '../../index/store.js';
import type { SkillRecord, Snapshot } from '../../index/types.js';
import type { Logger } from '../../log.js';
import type { Era } from '../../wire/protocol.js';
import { PerSnapshot } from '../per-snapshot.js';
import type { SkillsRequestObserver } from '../skills-handlers.js';
import { viewOf, type Visibility } from '../visibility.js';
import { INSTRUCTIONS, READ_SKILL_WITHOUT_CATALOG } from './catalog.js';
import { ConnectionOffer, type OfferedList } from './offer.js';
import { SkillSearch } from './search.js';
import { callCompatTool, compatTools, type ToolDeps } from './tools.js';

/** What the compat surfaces are built from. */
export interface CompatContext {
  readonly mode: CompatMode;
  readonly store: SnapshotStore;
  /** The source `resources/read` serves from: tools and prompts read through it, verified. */
  readonly source: SkillSource;
  /** Entries per `list_skills` page. */
  readonly pageSize: number;
  /** Bound of `read_skill`'s description, its catalog included (`--catalog-max`). */
  readonly catalogMax: number;
  readonly logger: Logger;
}

/** How a connection is served. */
interface Connection {
  readonly era: Era;
  readonly view: Visibility | undefined;
  /** `undefined` over stateless HTTP: each request is judged alone. */
  readonly offer: ConnectionOffer | undefined;
}

/** The prompts of one snapshot (as one view sees it): every skill's slot, and the slots by prompt name. */
interface Prompts {
  readonly slots: readonly PromptSlot<SkillRecord>[];
  readonly byName: ReadonlyMap<string, PromptSlot<SkillRecord>>;
}

/**
 * The compat surfaces of one server process: shared by every connection. Holds the prompt names of each snapshot,
 * the search index, and the offer of each connection that lasts.
 */
export class CompatSurfaces {
  readonly #context: CompatContext;
  readonly #prompts = new PerSnapshot<Prompts>();
  readonly #offers = new Set<ConnectionOffer>();
  readonly #sharedNames = new PerSnapshot<(name: string) => boolean>();
  readonly #search = new SkillSearch();

  /** A failure no prompt handler expected: logged with its stack; the client gets -32603 `Internal error`. */
  readonly #unexpected = (error: unknown): void =>
    this.#context.logger.error({ event: 'request-failed', err: error }, 'a prompt request failed unexpectedly');

  constructor(context: CompatContext) {
    this.#context = context;
  }

  /** Whether any client may be offered the surfaces (`mode` is not `off`). */
  get enabled(): boolean {
    return this.#context.mode !== 'off';
  }

  /** The server `instructions` ({@link INSTRUCTIONS}), or `undefined` in `off` mode. */
  get instructions(): string | undefined {
    return this.enabled ? INSTRUCTIONS : undefined;
  }

  /**
   * Declares the `tools` and `prompts` capabilities on `server` and serves `tools/list`, `tools/call`, `prompts/list`
   * and `prompts/get` from the current snapshot. Does nothing in `off` mode. Call before connecting.
   *
   * @param server a fresh, unconnected server: one connection (or one stateless HTTP request).
   * @param era the era it serves.
   * @param view the client's view (`--http-tokens`): tools and prompts name only the skills it sees.
   * @param lasting whether the connection lasts (stdio): its offer then follows what its host lists.
   * @returns what the Skills-extension handlers tell of their answers (the offer's), or `undefined`.
   */
  attach(
    server: McpServer,
    era: Era,
    view: Visibility | undefined,
    lasting: boolean,
  ): SkillsRequestObserver | undefined {
    if (!this.enabled) return undefined;
    const low = server.server;
    const offer = lasting ? this.#offerFor(server, era, view) : undefined;
    const connection: Connection = { era, view, offer };
    low.registerCapabilities({ tools: { listChanged: true }, prompts: { listChanged: true } });
    const deps = this.#toolDeps(view);

    low.setRequestHandler('tools/list', async () => {
      offer?.begin('tools');
      try {
        await offer?.settled();
        const description = this.#readSkillDescription(viewOf(await this.#context.store.ready(), view), connection);
        offer?.answered('tools', description);
        return { tools: compatTools(description) };
      } finally {
        offer?.end('tools');
      }
    });
    low.setRequestHandler('tools/call', async (request, ctx) => {
      const { name } = request.params;
      const result = await callCompatTool(name, request.params.arguments, {
        ...deps,
        read: (uri) => this.#context.source.read(uri, ctx),
      });
      if (result === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return low.projectCallToolResult(result, compatTools('').find((tool) => tool.name === name)?.outputSchema);
    });

    low.setRequestHandler('prompts/list', async (request) => {
      offer?.begin('prompts');
      try {
        await offer?.settled();
        const offered = this.#offeredPrompts(viewOf(await this.#context.store.ready(), view), connection);
        offer?.answered('prompts', promptsText(offered));
        const page = await asProtocolErrors(
          () => pageOf(offered, request.params?.cursor, PROMPTS_PAGE_SIZE, (slot) => slot.skill.uri),
          this.#unexpected,
        );
        const prompts = page.items.map(({ name, skill }) => ({
          name,
          description: collapseWhitespace(skill.description),
        }));
        return page.nextCursor === undefined ? { prompts } : { prompts, nextCursor: page.nextCursor };
      } finally {
        offer?.end('prompts');
      }
    });
    // Any skill's prompt is answered, offered or not: a host may still hold a prompt listed before.
    low.setRequestHandler('prompts/get', async (request, ctx) => {
      const { name } = request.params;
      const slot = this.#promptsOf(viewOf(await this.#context.store.ready(), view)).byName.get(name);
      if (slot === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return asProtocolErrors(() => this.#promptResult(slot, ctx), this.#unexpected);
    });
    return offer === undefined
      ? undefined
      : {
          listing: () => offer.beginListing(),
          page: (first, entries, complete) => offer.notePage(first, entries, complete),
          index: (kept) => offer.noteIndex(kept),
        };
  }

  /** The catalog changed: every connection is told what changed of what it holds. */
  refresh(): void {
    for (const offer of this.#offers) offer.refresh();
  }

  /** A lasting connection's offer, tracked until its transport closes. */
  #offerFor(server: McpServer, era: Era, view: Visibility | undefined): ConnectionOffer {
    const { logger, store } = this.#context;
    const offer: ConnectionOffer = new ConnectionOffer({
      current: (list) => this.#current(list, viewOf(store.current, view), { era, view, offer }),
      notify: (list) => {
        const send =
          list === 'tools' ? () => server.server.sendToolListChanged() : () => server.server.sendPromptListChanged();
        if (!server.isConnected()) return;
        send().catch((error: unknown) => logger.debug({ err: error, list }, 'list_changed not delivered'));
      },
      stoppedPaging: (listed) => {
        const total = viewOf(store.current, view).ordered.length;
        logger.info(
          { event: 'listing-partial', listed, total },
          `the client listed ${listed} of ${total} skills through the Skills extension and stopped; the other ${total - listed} stay reachable through search_skills, list_skills, read_skill and their prompts`,
        );
      },
    });
    this.#offers.add(offer);
    const closed = server.server.onclose;
    server.server.onclose = () => {
      this.#offers.delete(offer);
      offer.close();
      closed?.();
    };
    return offer;
  }

  /** What `list` would be answered to `connection` now. */
  #current(list: OfferedList, snapshot: Snapshot, connection: Connection): string {
    return list === 'tools'
      ? this.#readSkillDescription(snapshot, connection)
      : promptsText(this.#offeredPrompts(snapshot, connection));
  }

  /** The skills `connection` is offered through the compat surfaces (`snapshot` as its view sees it). */
  #unlisted(snapshot: Snapshot, connection: Connection): readonly SkillRecord[] {
    if (this.#context.mode === 'on') return snapshot.ordered;
    const { offer } = connection;
    if (offer === undefined) return connection.era === 'legacy' ? snapshot.ordered : [];
    return snapshot.ordered.filter((skill, position) => !offer.holds(skill, position));
  }

  #readSkillDescription(snapshot: Snapshot, connection: Connection): string {
    // Over stateless HTTP a 2026-07-28 host may list the skills itself: no catalog, and no claim about its list.
    if (connection.offer === undefined && connection.era === 'modern' && this.#context.mode === 'auto')
      return READ_SKILL_WITHOUT_CATALOG;
    const unlisted = this.#unlisted(snapshot, connection);
    // A skill whose author disabled model invocation is the user's to run (its prompt): no model-facing line.
    return readSkillDescription(
      unlisted.filter((skill) => skill.modelInvocable),
      snapshot.ordered.length - unlisted.length,
      this.#context.catalogMax,
      this.#sharedNames.get(snapshot, undefined, () => sharedAmong(snapshot.ordered)),
    );
  }

  #offeredPrompts(snapshot: Snapshot, connection: Connection): readonly PromptSlot<SkillRecord>[] {
    const { slots } = this.#promptsOf(snapshot);
    // A skill that is not user-invocable gets no prompt (a prompt is a command for the user).
    const unlisted = this.#unlisted(snapshot, connection).filter((skill) => skill.userInvocable);
    if (unlisted.length === slots.length) return slots;
    const offered = new Set(unlisted);
    return slots.filter((slot) => offered.has(slot.skill));
  }

  #promptsOf(snapshot: Snapshot): Prompts {
    return this.#prompts.get(snapshot, undefined, () => {
      const slots = assignPromptNames(snapshot.ordered);
      return { slots, byName: new Map(slots.map((slot) => [slot.name, slot])) };
    });
  }

  async #promptResult({ skill }: PromptSlot<SkillRecord>, ctx: RequestContext): Promise<GetPromptResult> {
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

/** What a prompts answer says, to compare answers by: each prompt's name, skill and description. */
function promptsText(slots: readonly PromptSlot<SkillRecord>[]): string {
  return slots.map(({ name, skill }) => `${name}\0${skill.uri}\0${skill.description}`).join('\n');
}

/**
 * The text of a skill's prompt, its only message: what to do, the skill's URI, then its `SKILL.md` verbatim. One text
 * message because Gemini CLI keeps only the first message of a prompt, and only if it is text, while an embedded
 * resource after it would reach Claude Code's model as a second copy of the same text (docs/hosts/README.md, "What
 * reaches each host's model").
 */
function promptText(name: string, uri: string, manifest: string): string {
  return `Use the "${name}" skill for this task: follow its SKILL.md (${uri}), quoted below. Read the other files it mentions with the read_skill_file tool.\n\n${manifest}`;
}
