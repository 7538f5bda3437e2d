/**
 * The registered kinds of root (docs/ARCHITECTURE.md, "Sources"): adding a kind is a folder of its own implementing
 * `RootKind` (`kind.ts`) and one line here. The types every other layer uses (`SourceSpec`, `RootKindSettings`) are
 * derived from this list.
 */
import { folderKind } from './folder/kind.js';
import { gitKind } from './git/kind.js';
import type { RootKind } from './kind.js';

/** Every kind, in the order a root argument is offered to them: the folder kind, which takes any argument, last. */
export const ROOT_KINDS = [gitKind, folderKind] as const;

type Kind = (typeof ROOT_KINDS)[number];
type SpecOf<K> = K extends RootKind<infer Spec, unknown> ? Spec : never;
type SettingsOf<K> = K extends RootKind<{ readonly kind: string }, infer Settings> ? Settings : never;

/** What one root argument names: the spec of its kind, tagged with the kind's name (`{ kind: 'git', git }`). */
export type SourceSpec = SpecOf<Kind>;

/** Each kind's settings by kind name (`{ git: GitSettings }`), kinds without settings left out. */
export type RootKindSettings = {
  readonly [K in Kind as SettingsOf<K> extends undefined ? never : K['name']]: SettingsOf<K>;
};

/** The kind of a parsed root, to open or describe it. */
export function kindOf(spec: SourceSpec): RootKind<SourceSpec, unknown> {
  return ROOT_KINDS.find((kind) => kind.name === spec.kind) as RootKind<SourceSpec, unknown>;
}

/** The settings of `kind` among every kind's (`undefined` for a kind without). */
export function settingsOf(kind: RootKind<SourceSpec, unknown>, settings: RootKindSettings): unknown {
  return (settings as Readonly<Record<string, unknown>>)[kind.name];
}
