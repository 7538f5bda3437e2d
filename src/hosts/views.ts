/**
 * What each host's model and user see of a catalog (`check --hosts`): per host profile, through the channel the host
 * uses as it ships, which skills are described in full, which are cut (after how many characters), which fall past a
 * cap (and which), which get a prompt and under what name, and how names several skills share are shown. Computed
 * with the functions the compat surfaces send (`catalog.ts`) and the limits they are sized by (`profiles.ts`), so the
 * figures are the server's own. Pure: the caller brings the skills in `skills/list` order and the sizes of the
 * `skills/list` pages the server answers.
 *
 * A host's channels:
 * - its own skill list, when its Skills-extension client is on: the `skills/list` pages it reads, less what it drops
 *   (past its skill, byte or page caps) and declines; the server leaves out of the compat surfaces what it answered
 *   in those pages (`server/compat/offer.ts`);
 * - `read_skill`'s description, for a host that offers its model the server's tools: the catalog of the rest, within
 *   `--catalog-max`, and within what the host shows of a tool description;
 * - prompts, for a host that lists them: one per skill the host does not hold itself, for its user.
 */
import {
  assignPromptNames,
  catalogLine,
  collapseWhitespace,
  type PromptNamed,
  readSkillCatalog,
  sharedAmong,
} from './catalog.js';
import {
  EXTENSION_MAX_MANIFEST_BYTES,
  EXTENSION_MAX_URI_BYTES,
  type ExtensionClient,
  HOST_PROFILES,
  type HostProfile,
  PROMPTS_PAGE_SIZE,
} from './profiles.js';

/** What a host view reads of a served skill. */
export interface HostSkill extends PromptNamed {
  /** Its `SKILL.md` URI. */
  readonly uri: string;
  readonly name: string;
  /** Frontmatter `description`, verbatim. */
  readonly description: string;
  /** False for frontmatter `disable-model-invocation: true`: no catalog line, still a prompt. */
  readonly modelInvocable: boolean;
  /** False for frontmatter `user-invocable: false`: no prompt. */
  readonly userInvocable: boolean;
  /** UTF-8 bytes of its `skills/list` entry (its JSON). */
  readonly entryBytes: number;
  /** Bytes of its `SKILL.md`. */
  readonly manifestBytes: number;
  /**
   * UTF-16 length of its `SKILL.md` text; may be left out when `manifestBytes` is within every host's tool-result cut
   * (a text is never longer than its UTF-8 bytes).
   */
  readonly manifestChars?: number;
  /** UTF-8 bytes of the longest URI of a file or directory of the skill. */
  readonly longestUriBytes: number;
}

/** What {@link hostViews} is told besides the skills. */
export interface HostViewOptions {
  /** Bound of `read_skill`'s description (`--catalog-max`). */
  readonly catalogMax: number;
  /** Entries of each `skills/list` page the server answers, in order (they add up to the number of skills). */
  readonly pages: readonly number[];
  /** The hosts (default: {@link HOST_PROFILES}). */
  readonly profiles?: readonly HostProfile[];
}

/** A limit that cuts a description or leaves a skill out. */
export interface Cap {
  /**
   * - `catalog-max`: the bound of `read_skill`'s description (`--catalog-max`);
   * - `tool-description`: the characters of a tool description the host shows its model;
   * - `extension-description`: the characters of a description the host's extension client shows its model;
   * - `extension-skills`, `extension-bytes`, `extension-pages`: the skills, bytes of entries and `skills/list` pages
   *   its extension client keeps of one server.
   */
  readonly id:
    | 'catalog-max'
    | 'tool-description'
    | 'extension-description'
    | 'extension-skills'
    | 'extension-bytes'
    | 'extension-pages';
  readonly limit: number;
}

/** Why a host's extension client declines an entry it was sent (the skill is offered through the compat surfaces). */
export type Decline =
  | { readonly id: 'manifest-bytes'; readonly bytes: number; readonly limit: number }
  | { readonly id: 'uri-dollar' }
  | { readonly id: 'uri-bytes'; readonly bytes: number; readonly limit: number };

/** How a host's model is shown one skill. */
export type ModelStatus =
  /** Its whole description. */
  | 'full'
  /** Part of its description (`shownChars` of `descriptionChars`). */
  | 'cut'
  /** Nothing: a cap left it out (`cap`); `reachable` says whether `search_skills` and `list_skills` still find it. */
  | 'past-cap'
  /** Nothing, by its author's choice (`disable-model-invocation: true`): it is its prompt's to run. */
  | 'user-only'
  /** Nothing: the host refused the whole server (an entry it finds invalid; see {@link HostView.refused}). */
  | 'refused';

/** One skill as one host shows it. */
export interface SkillRow {
  readonly uri: string;
  readonly name: string;
  readonly model: ModelStatus;
  /** Where its description reaches the model: the host's own skill list, or `read_skill`'s catalog. */
  readonly channel?: 'extension' | 'catalog';
  /** Characters of its description as that channel carries it (the catalog collapses whitespace). */
  readonly descriptionChars: number;
  /** `cut`: how many of those characters the model is shown. */
  readonly shownChars?: number;
  /** `cut`, `past-cap`: the limit. */
  readonly cap?: Cap;
  /** `past-cap`: whether the model can still find it with `search_skills` and `list_skills`. */
  readonly reachable?: boolean;
  /** The host's extension client declines its entry. */
  readonly declined?: Decline;
  /** Its line in `read_skill`'s catalog, as sent (also when the host cuts the description inside it). */
  readonly line?: string;
  /** Its prompt's name, when the host lists the prompt to its user. */
  readonly prompt?: string;
  /**
   * Why the host lists no prompt for it: its frontmatter says `user-invocable: false`; the host holds it in its own
   * skill list; the host lists no prompts; or it is past the one `prompts/list` page the host reads.
   */
  readonly noPrompt?: 'user-invocable' | 'own-list' | 'host-lists-none' | 'prompts-page';
  /** `read_skill`'s result holds more than the host passes its model whole: its `SKILL.md` text, and the cut. */
  readonly result?: { readonly manifestChars: number; readonly keptChars: number };
}

/** What one host shows of the catalog. */
export interface HostView {
  /** The profile's id, with `+extension` for a host whose extension client is switched off as it ships. */
  readonly id: string;
  readonly label: string;
  /** A released host as it ships: `check --hosts --strict` fails on its cuts and caps. */
  readonly released: boolean;
  /** Served skills. */
  readonly skills: number;
  /** Skills whose whole description its model is shown. */
  readonly full: number;
  /** Its own skill list (the extension): skills kept, pages read, and the description cut. */
  readonly extension?: {
    readonly listed: number;
    readonly pagesRead: number;
    readonly descriptionChars?: number;
  };
  /** `read_skill`'s description (hosts that offer the tools): catalog lines, length, bound, the host's own cut. */
  readonly catalog?: {
    readonly lines: number;
    readonly chars: number;
    readonly max: number;
    /** What the host shows of it, when that is less than its length. */
    readonly hostCut?: number;
  };
  /** Prompts its user is shown; absent for a host that lists none. */
  readonly prompts?: number;
  /** The entry that made the host refuse the whole server, and why. */
  readonly refused?: { readonly uri: string; readonly reason: string };
  /** Every served skill, in `skills/list` order. */
  readonly rows: readonly SkillRow[];
  /** Names several served skills share, with their URIs. */
  readonly collisions: readonly { readonly name: string; readonly uris: readonly string[] }[];
}

/** What the server takes every extension client to decline (`server/compat/offer.ts`, `declinedByHosts`). */
export const DECLINED_BY_HOSTS: ExtensionClient = {
  maxManifestBytes: EXTENSION_MAX_MANIFEST_BYTES,
  maxUriBytes: EXTENSION_MAX_URI_BYTES,
  shipped: true,
};

/**
 * Why `client` declines `skill`'s entry: a `SKILL.md` over its bound, a `SKILL.md` URI holding `$`, or a URI over
 * its bound (each checked only when the client has that bound).
 *
 * @returns the reason, or `undefined` when it keeps the entry.
 */
export function extensionDecline(
  skill: Pick<HostSkill, 'uri' | 'manifestBytes' | 'longestUriBytes'>,
  client: ExtensionClient,
): Decline | undefined {
  const { maxManifestBytes, maxUriBytes } = client;
  if (maxManifestBytes !== undefined && skill.manifestBytes > maxManifestBytes)
    return { id: 'manifest-bytes', bytes: skill.manifestBytes, limit: maxManifestBytes };
  if (maxUriBytes === undefined) return undefined;
  if (skill.uri.includes('$')) return { id: 'uri-dollar' };
  if (skill.longestUriBytes > maxUriBytes) return { id: 'uri-bytes', bytes: skill.longestUriBytes, limit: maxUriBytes };
  return undefined;
}

/** Agent Framework's name rule: lowercase letters and digits, single hyphens inside. */
const AGENT_FRAMEWORK_NAME = /^[a-z0-9](?:[a-z0-9]*-[a-z0-9])*[a-z0-9]*$/u;
/** What .NET's `string.IsNullOrWhiteSpace` counts as white space. */
const DOTNET_BLANK = /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/u;
/** What .NET's `char.IsControl` is true for. */
// eslint-disable-next-line no-control-regex -- control characters are what this matches
const DOTNET_CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/**
 * Why Microsoft Agent Framework's `skills/list` loader refuses an entry (and with it every skill of the server):
 * its checks of the URI (ends in `/SKILL.md`, no backslash or control character, last directory segment equal to the
 * name) and of the frontmatter (`AgentSkillFrontmatter.ValidateName`, `ValidateDescription`: UTF-16 lengths).
 *
 * @returns the reason in the loader's words, or `undefined` for an entry it accepts.
 */
export function agentFrameworkRefusal(skill: Pick<HostSkill, 'uri' | 'name' | 'description'>): string | undefined {
  const { uri, name, description } = skill;
  if (!uri.endsWith('/SKILL.md') || uri.includes('\\') || DOTNET_CONTROL.test(uri))
    return 'a skill entry must specify an absolute SKILL.md resource URI';
  if (DOTNET_BLANK.test(name)) return 'Skill name is required.';
  if (name.length > 64) return 'Skill name must be 64 characters or fewer.';
  if (!AGENT_FRAMEWORK_NAME.test(name))
    return 'Skill name must use only lowercase letters, numbers, and hyphens, and must not start or end with a hyphen or contain consecutive hyphens.';
  if (DOTNET_BLANK.test(description)) return 'Skill description is required.';
  if (description.length > 1024) return 'Skill description must be 1024 characters or fewer.';
  const directory = uri.slice(0, -'/SKILL.md'.length);
  if (directory.slice(directory.lastIndexOf('/') + 1) !== name)
    return 'the skill URI must end with its frontmatter name followed by /SKILL.md';
  return undefined;
}

/** One host as one view: a host whose extension client ships switched off is shown both ways. */
interface Variant {
  readonly id: string;
  readonly label: string;
  readonly profile: HostProfile;
  readonly extension: ExtensionClient | undefined;
  readonly released: boolean;
}

function variantsOf(profiles: readonly HostProfile[]): Variant[] {
  return profiles.flatMap((profile): Variant[] => {
    const { id, label, extension } = profile;
    const released = !profile.prototype;
    if (extension === undefined || extension.shipped) return [{ id, label, profile, extension, released }];
    return [
      { id, label, profile, extension: undefined, released },
      { id: `${id}+extension`, label: `${label}, extension client on`, profile, extension, released: false },
    ];
  });
}

/**
 * What every host shows of `skills`.
 *
 * @param skills the served skills, in `skills/list` order.
 * @returns one view per host profile (two for a host whose extension client ships switched off: as it ships, then
 *   with the client on), in profile order.
 */
export function hostViews(skills: readonly HostSkill[], options: HostViewOptions): HostView[] {
  const shared = sharedAmong(skills);
  const promptNames = assignPromptNames(skills).map((slot) => slot.name);
  const collisions = [...new Set(skills.map((skill) => skill.name).filter(shared))].map((name) => ({
    name,
    uris: skills.filter((skill) => skill.name === name).map((skill) => skill.uri),
  }));
  return variantsOf(options.profiles ?? HOST_PROFILES).map((variant) =>
    hostView(variant, skills, options, { shared, promptNames, collisions }),
  );
}

/** What every view shares. */
interface Common {
  readonly shared: (name: string) => boolean;
  /** The prompt name of each skill (by position), as the server names them. */
  readonly promptNames: readonly string[];
  readonly collisions: HostView['collisions'];
}

/** What a host's extension client does with the `skills/list` pages. */
interface Listing {
  /** Skills (by position) the host keeps in its own list. */
  readonly kept: ReadonlySet<number>;
  /** Skills it was answered but dropped, or never read, with the cap. */
  readonly capped: ReadonlyMap<number, Cap>;
  readonly declined: ReadonlyMap<number, Decline>;
  /** Skills (by position) the server takes the host to hold: left out of the compat surfaces. */
  readonly held: ReadonlySet<number>;
  readonly pagesRead: number;
  /** The first entry the host finds invalid, when it refuses the server for it. */
  readonly refused?: { readonly uri: string; readonly reason: string };
}

function listing(skills: readonly HostSkill[], pages: readonly number[], client: ExtensionClient): Listing {
  const kept = new Set<number>();
  const capped = new Map<number, Cap>();
  const declined = new Map<number, Decline>();
  let refused: Listing['refused'];
  let keptBytes = 0;
  let pagesRead = 0;
  let start = 0;
  let stop: Cap | undefined;
  for (const size of pages) {
    if (client.maxPages !== undefined && pagesRead >= client.maxPages)
      stop = { id: 'extension-pages', limit: client.maxPages };
    else if (client.maxSkills !== undefined && kept.size >= client.maxSkills)
      stop = { id: 'extension-skills', limit: client.maxSkills };
    else if (client.maxEntryBytes !== undefined && keptBytes >= client.maxEntryBytes)
      stop = { id: 'extension-bytes', limit: client.maxEntryBytes };
    if (stop !== undefined) break;
    pagesRead++;
    for (let position = start; position < start + size; position++) {
      const skill = skills[position] as HostSkill;
      if (client.failsOnInvalidEntry === true && refused === undefined) {
        const reason = agentFrameworkRefusal(skill);
        if (reason !== undefined) refused = { uri: skill.uri, reason };
      }
      const decline = extensionDecline(skill, client);
      if (decline !== undefined) declined.set(position, decline);
      else if (client.maxSkills !== undefined && kept.size >= client.maxSkills)
        capped.set(position, { id: 'extension-skills', limit: client.maxSkills });
      else if (client.maxEntryBytes !== undefined && keptBytes + skill.entryBytes > client.maxEntryBytes)
        capped.set(position, { id: 'extension-bytes', limit: client.maxEntryBytes });
      else {
        kept.add(position);
        keptBytes += skill.entryBytes;
      }
    }
    start += size;
  }
  // The server holds what it answered (all of it once the last page was read), less what it takes hosts to decline.
  const answered = pagesRead === pages.length ? skills.length : start;
  const held = new Set<number>();
  for (let position = 0; position < skills.length; position++) {
    if (position < answered) {
      if (extensionDecline(skills[position] as HostSkill, DECLINED_BY_HOSTS) === undefined) held.add(position);
    } else if (stop !== undefined) capped.set(position, stop);
  }
  return { kept, capped, declined, held, pagesRead, ...(refused === undefined ? {} : { refused }) };
}

const NO_LISTING: Listing = {
  kept: new Set(),
  capped: new Map(),
  declined: new Map(),
  held: new Set(),
  pagesRead: 0,
};

function hostView(variant: Variant, skills: readonly HostSkill[], options: HostViewOptions, common: Common): HostView {
  const { profile, extension } = variant;
  const { shared, promptNames } = common;
  const list = extension === undefined ? NO_LISTING : listing(skills, options.pages, extension);

  // read_skill's catalog, as the server words it for this connection (surfaces.ts).
  const unlisted = skills.filter((_, position) => !list.held.has(position));
  const catalogued = unlisted.filter((skill) => skill.modelInvocable);
  const catalog = readSkillCatalog(catalogued, skills.length - unlisted.length, options.catalogMax, shared);
  const lines = catalogued.slice(0, catalog.shown).map((skill) => catalogLine(skill, shared(skill.name)));
  const hostCut =
    profile.toolDescriptionChars !== undefined && profile.toolDescriptionChars < catalog.text.length
      ? profile.toolDescriptionChars
      : undefined;
  const catalogRows = new Map<HostSkill, Omit<SkillRow, 'uri' | 'name'>>();
  let lineStart = catalog.text.length - (lines.reduce((sum, line) => sum + line.length + 1, 0) - 1);
  catalogued.forEach((skill, index) => {
    const descriptionChars = collapseWhitespace(skill.description).length;
    const line = lines[index];
    if (line === undefined) {
      catalogRows.set(skill, {
        model: 'past-cap',
        descriptionChars,
        cap: { id: 'catalog-max', limit: options.catalogMax },
        reachable: true,
      });
      return;
    }
    const descriptionStart = lineStart + line.length - descriptionChars;
    const fields = { channel: 'catalog', descriptionChars, line } as const;
    if (hostCut === undefined || lineStart + line.length <= hostCut)
      catalogRows.set(skill, { model: 'full', ...fields });
    else if (hostCut <= lineStart) {
      const cap = { id: 'tool-description', limit: hostCut } as const;
      catalogRows.set(skill, { model: 'past-cap', ...fields, cap, reachable: true });
    } else {
      const cap = { id: 'tool-description', limit: hostCut } as const;
      catalogRows.set(skill, { model: 'cut', ...fields, shownChars: Math.max(0, hostCut - descriptionStart), cap });
    }
    lineStart += line.length + 1;
  });

  // Prompts: one per skill the host does not hold and whose author lets the user invoke it, in one page or more.
  let promptsListed = 0;
  const promptOf = (skill: HostSkill, position: number): Pick<SkillRow, 'prompt' | 'noPrompt'> => {
    if (!profile.listsPrompts) return { noPrompt: 'host-lists-none' };
    if (list.held.has(position)) return { noPrompt: 'own-list' };
    if (!skill.userInvocable) return { noPrompt: 'user-invocable' };
    if (!profile.pagesPrompts && promptsListed >= PROMPTS_PAGE_SIZE) return { noPrompt: 'prompts-page' };
    promptsListed++;
    return { prompt: promptNames[position] };
  };

  const rows = skills.map((skill, position): SkillRow => {
    const base = { uri: skill.uri, name: skill.name };
    const prompt = promptOf(skill, position);
    const declined = list.declined.get(position);
    const extra = { ...(declined === undefined ? {} : { declined }), ...prompt };
    if (list.refused !== undefined)
      return { ...base, model: 'refused', descriptionChars: skill.description.length, ...extra };
    if (list.kept.has(position)) {
      const descriptionChars = skill.description.length;
      const limit = extension?.descriptionChars;
      const channel = 'extension';
      if (limit === undefined || descriptionChars <= limit)
        return { ...base, model: 'full', channel, descriptionChars, ...extra };
      const cap = { id: 'extension-description', limit } as const;
      return { ...base, model: 'cut', channel, descriptionChars, shownChars: limit, cap, ...extra };
    }
    const capped = list.capped.get(position);
    const inCatalog = catalogRows.get(skill);
    // Held by the server but not by the host (dropped past a cap), or not held and the host shows no tools.
    if (list.held.has(position) || (!profile.offersTools && skill.modelInvocable)) {
      const cap = capped ?? { id: 'extension-pages', limit: list.pagesRead };
      const reachable = profile.offersTools;
      return { ...base, model: 'past-cap', descriptionChars: skill.description.length, cap, reachable, ...extra };
    }
    if (inCatalog === undefined)
      return { ...base, model: 'user-only', descriptionChars: skill.description.length, ...extra };
    const row: SkillRow = { ...base, ...inCatalog, ...extra };
    const chars = skill.manifestChars ?? skill.manifestBytes;
    const cut = profile.toolResultChars;
    return cut !== undefined && chars > cut ? { ...row, result: { manifestChars: chars, keptChars: cut } } : row;
  });

  return {
    id: variant.id,
    label: variant.label,
    released: variant.released,
    skills: skills.length,
    full: rows.filter((row) => row.model === 'full').length,
    ...(extension === undefined
      ? {}
      : {
          extension: {
            listed: list.refused === undefined ? list.kept.size : 0,
            pagesRead: list.pagesRead,
            ...(extension.descriptionChars === undefined ? {} : { descriptionChars: extension.descriptionChars }),
          },
        }),
    ...(profile.offersTools
      ? {
          catalog: {
            lines: catalog.shown,
            chars: catalog.text.length,
            max: options.catalogMax,
            ...(hostCut === undefined ? {} : { hostCut }),
          },
        }
      : {}),
    ...(profile.listsPrompts ? { prompts: promptsListed } : {}),
    ...(list.refused === undefined ? {} : { refused: list.refused }),
    rows,
    collisions: common.collisions,
  };
}

/** Rows the model of a released host is not shown whole (`check --hosts --strict` fails on them). */
export function strictFailures(view: HostView): readonly SkillRow[] {
  return view.released
    ? view.rows.filter((row) => row.model === 'cut' || row.model === 'past-cap' || row.model === 'refused')
    : [];
}
