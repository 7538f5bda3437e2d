/** Types of `hosts.mjs` (plain JavaScript, so that scripts/install-hosts.mjs can import it under Node 20). */
export interface Host {
  readonly name: string;
  readonly package: string;
  readonly version: string;
  readonly dir: string;
  readonly bin: string;
}
export declare const HOSTS: readonly Host[];
export declare function hostsCacheDir(): string;
export declare function hostBinary(host: Host): string;

export declare const SKILLS_CLI: Readonly<{ package: string; version: string; node: string; dir: string }>;
export declare function skillsCli(): { node: string; cli: string };
