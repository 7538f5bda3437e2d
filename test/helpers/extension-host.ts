/**
 * A model of a host with the Skills extension, as Claude Code's extension client (2.1.332, its flag on) behaves on the
 * wire (docs/hosts/claude-code.md; issue 29): `server/discover` (the extension not declared),
 * `subscriptions/listen`, `server/discover` again, then in one write `prompts/list`, `skills/list` (the extension
 * declared in its `_meta` only), `resources/list` and `tools/list`.
 *
 * - **Its first fetch** is those four answers, every further `resources/list` and `prompts/list` page (it follows
 *   their `nextCursor` to the end), and the further `skills/list` pages it reads: it keeps at most 100 skills of a
 *   server and reads at most 20 pages, and asks no further page once it has 100. It reads one page of `tools/list`.
 * - **Its `list_changed` handlers** (tools, prompts, resources) are registered only once that whole first fetch is
 *   answered: every notification that arrives before the last answer of the first fetch is lost (kept in
 *   {@link ExtensionHost.lost}, not acted on). Claude Code registers them later still (after more work of its own;
 *   issue 29 measured a notification 59-212 ms too early): a notification this model takes right after its first
 *   fetch may still be lost there, so what it holds after its first fetch ({@link ExtensionHost.firstFetch}) is what
 *   such a host is sure to show.
 * - **After that**, it re-asks a list only for a `list_changed` that arrives after that list's answer (one that
 *   arrives while the list is in flight is lost), and re-lists resources, prompts and skills on
 *   `notifications/resources/list_changed`, following their pages as in the first fetch.
 *
 * Not modelled: time (it reacts to each message as soon as it reads it) and the 512 KiB of entry JSON Claude Code keeps
 * of a server (the server pages `skills/list` within it). What it holds at the end is what its user and its model are
 * shown: the skills it listed, the prompts (slash commands, with those skills the `/skills:` menu), and the tools (the
 * catalog in `read_skill`'s description).
 */
import { type Message, spawnWire, type Wire } from './wire.js';

/** The most skills the host keeps of one server. */
export const HOST_KEEPS_SKILLS = 100;

/** The most `skills/list` pages the host reads of one server in one listing. */
export const HOST_READS_SKILLS_PAGES = 20;

type List = 'prompts' | 'skills' | 'resources' | 'tools';

const LISTS: readonly List[] = ['prompts', 'skills', 'resources', 'tools'];

/** What the host holds once the server has nothing more to tell it. */
export interface HostView {
  /** `SKILL.md` URIs of the skills it lists through the extension (shown to the model and the user). */
  readonly skills: readonly string[];
  /** Prompt names (slash commands shown to the user). */
  readonly prompts: readonly string[];
  /** Tool names. */
  readonly tools: readonly string[];
  /** `read_skill`'s description as held. */
  readonly readSkill: string;
  /** Resource URIs held (`@` mentions), every page. */
  readonly resources: readonly string[];
}

/** A notification the host did not act on, and why. */
export interface LostNotification {
  readonly method: string;
  /** `first-fetch`: it arrived before the host registered its handlers; `in-flight`: while its list was asked. */
  readonly during: 'first-fetch' | 'in-flight';
}

const meta = (extension: boolean): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'extension-host-model', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    roots: { listChanged: true },
    extensions: extension
      ? { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} }
      : { 'io.modelcontextprotocol/tasks': {} },
  },
});

const LIST_METHOD: Record<List, string> = {
  prompts: 'prompts/list',
  skills: 'skills/list',
  resources: 'resources/list',
  tools: 'tools/list',
};

const CHANGED: Record<string, List> = {
  'notifications/prompts/list_changed': 'prompts',
  'notifications/tools/list_changed': 'tools',
};

const RESOURCES_CHANGED = 'notifications/resources/list_changed';

/** The model host over one server process. */
export class ExtensionHost {
  readonly wire: Wire;
  #read = 0;
  #next = 1;
  readonly #pending = new Map<string, List | 'ping'>();
  readonly #inFlight = new Set<List>();
  /** The lists whose first fetch is not answered yet; the handlers are registered once it is empty. */
  readonly #firstFetch = new Set<List>(LISTS);
  #firstView: HostView | undefined;
  #skills: string[] = [];
  #skillsBuffer: string[] = [];
  #skillsPages = 0;
  #prompts: string[] = [];
  #promptsBuffer: string[] = [];
  #tools: { name: string; description?: string }[] = [];
  #resources: string[] = [];
  #resourcesBuffer: string[] = [];
  /** Notifications the host did not act on, in arrival order. */
  readonly lost: LostNotification[] = [];
  /** Requests the host sent of each list, every page counted. */
  readonly requests: Record<List, number> = { prompts: 0, skills: 0, resources: 0, tools: 0 };

  /**
   * @param args the server's arguments (roots and flags).
   * @param env extra environment for the server.
   */
  constructor(args: readonly string[], env: Record<string, string> = {}) {
    this.wire = spawnWire({ args, env });
  }

  /** Connects as the host does, sends the burst, and follows every change until the server has nothing more to say. */
  async connect(): Promise<HostView> {
    await this.open();
    return this.settle();
  }

  /**
   * Connects as the host does and sends the burst; then a `ping`, answered once the server has read the burst (its
   * requests are then under way, waiting for the first build if it is still running).
   */
  async open(): Promise<void> {
    const { wire } = this;
    wire.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: meta(false) } });
    wire.send({
      jsonrpc: '2.0',
      id: 'listen',
      method: 'subscriptions/listen',
      params: {
        _meta: meta(false),
        notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
      },
    });
    wire.send({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: meta(false) } });
    await wire.waitFor((message) => message['id'] === 'discover');
    // The burst, in one write.
    const burst = LISTS.map((list) => this.#request(list));
    await wire.write(burst.map((message) => `${JSON.stringify(message)}\n`).join(''));
    await wire.request('ping', { _meta: meta(false) });
  }

  /**
   * Handles what the server sent, in order (following pages, then re-asking what it changed), until a `ping` answered
   * with nothing pending brings nothing new: everything the server sent before that answer has been seen.
   *
   * @returns what the host holds then.
   */
  async settle(): Promise<HostView> {
    for (;;) {
      if (this.#pending.size === 0) {
        const id = `ping-${this.#next++}`;
        this.#pending.set(id, 'ping');
        this.wire.send({ jsonrpc: '2.0', id, method: 'ping', params: { _meta: meta(false) } });
      }
      const message = await this.#nextMessage();
      const id = typeof message['id'] === 'string' ? message['id'] : undefined;
      const kind = id === undefined ? undefined : this.#pending.get(id);
      if (kind !== undefined && id !== undefined && typeof message['method'] !== 'string') {
        this.#pending.delete(id);
        if (kind === 'ping') {
          if (this.#pending.size === 0) return this.view();
          continue;
        }
        this.#inFlight.delete(kind);
        this.#answered(kind, (message['result'] ?? {}) as Record<string, unknown>);
        continue;
      }
      const method = message['method'];
      if (typeof method !== 'string') continue;
      const changed = CHANGED[method];
      if (changed === undefined && method !== RESOURCES_CHANGED) continue;
      if (!this.listening) {
        this.lost.push({ method, during: 'first-fetch' });
      } else if (changed !== undefined) {
        if (this.#inFlight.has(changed)) this.lost.push({ method, during: 'in-flight' });
        else this.#send(this.#request(changed));
      } else {
        for (const list of ['resources', 'prompts', 'skills'] as const)
          if (!this.#inFlight.has(list)) this.#send(this.#request(list));
      }
    }
  }

  /** Whether the host's `list_changed` handlers are registered: its first fetch is answered. */
  get listening(): boolean {
    return this.#firstFetch.size === 0;
  }

  /** What the host held once its first fetch was answered (before it acted on any notification), if it was. */
  get firstFetch(): HostView | undefined {
    return this.#firstView;
  }

  /** What the host holds now. */
  view(): HostView {
    return {
      skills: [...this.#skills],
      prompts: [...this.#prompts],
      tools: this.#tools.map((tool) => tool.name),
      readSkill: this.#tools.find((tool) => tool.name === 'read_skill')?.description ?? '',
      resources: [...this.#resources],
    };
  }

  /** Sends a request with a fresh id and resolves with its answer (for the test's own calls). */
  request(method: string, params: Record<string, unknown> = {}): Promise<Message> {
    return this.wire.request(method, { ...params, _meta: meta(false) });
  }

  /** Ends the server. */
  stop(): Promise<void> {
    return this.wire.stop();
  }

  /** An answer of `list` arrived: holds it, or asks the next page. */
  #answered(list: List, result: Record<string, unknown>): void {
    const next = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
    if (list === 'prompts') {
      this.#promptsBuffer.push(...(result['prompts'] as { name: string }[]).map((prompt) => prompt.name));
      if (next !== undefined) {
        this.#send(this.#request('prompts', next));
        return;
      }
      this.#prompts = this.#promptsBuffer;
      this.#promptsBuffer = [];
    } else if (list === 'tools') this.#tools = result['tools'] as { name: string; description?: string }[];
    else if (list === 'resources') {
      this.#resourcesBuffer.push(...(result['resources'] as { uri: string }[]).map((resource) => resource.uri));
      if (next !== undefined) {
        this.#send(this.#request('resources', next));
        return;
      }
      this.#resources = this.#resourcesBuffer;
      this.#resourcesBuffer = [];
    } else {
      this.#skillsBuffer.push(...(result['skills'] as { uri: string }[]).map((entry) => entry.uri));
      this.#skillsPages++;
      if (
        next !== undefined &&
        this.#skillsBuffer.length < HOST_KEEPS_SKILLS &&
        this.#skillsPages < HOST_READS_SKILLS_PAGES
      ) {
        this.#send(this.#request('skills', next));
        return;
      }
      this.#skills = this.#skillsBuffer.slice(0, HOST_KEEPS_SKILLS);
      this.#skillsBuffer = [];
    }
    // `list` is fetched: the last list of the first fetch registers the handlers.
    if (this.listening) return;
    this.#firstFetch.delete(list);
    if (this.listening) this.#firstView = this.view();
  }

  #request(list: List, cursor?: string): Record<string, unknown> {
    const id = `${list}-${this.#next++}`;
    this.requests[list]++;
    this.#pending.set(id, list);
    this.#inFlight.add(list);
    if (cursor === undefined) {
      if (list === 'skills') {
        this.#skillsBuffer = [];
        this.#skillsPages = 0;
      } else if (list === 'resources') this.#resourcesBuffer = [];
      else if (list === 'prompts') this.#promptsBuffer = [];
    }
    return {
      jsonrpc: '2.0',
      id,
      method: LIST_METHOD[list],
      params: { ...(cursor === undefined ? {} : { cursor }), _meta: meta(list === 'skills') },
    };
  }

  #send(message: Record<string, unknown>): void {
    this.wire.send(message);
  }

  async #nextMessage(): Promise<Message> {
    const at = this.#read;
    await this.wire.waitFor(() => this.wire.messages.length > at);
    this.#read++;
    return this.wire.messages[at] as Message;
  }
}

/** The `SKILL.md` URIs (or names, for lines without one) a `read_skill` description's catalog names, in order. */
export function catalogOf(description: string): string[] {
  const [, catalog = ''] = description.split('\n\nSkills (name: description):\n');
  return catalog === ''
    ? []
    : catalog
        .split('\n')
        .map((line) => /^- ([^ :]+)(?: \(([^)]+)\))?: /u.exec(line)?.[2] ?? /^- ([^ :]+)/u.exec(line)?.[1] ?? line);
}
