/** Types of `podman.mjs` (plain JavaScript, so that scripts/container-image.mjs can import it). */
export declare const PODMAN_FLAGS: readonly string[];
export declare const LIMIT_FLAGS: readonly string[];
export declare const BASE_IMAGE: string;
export declare const IMAGE: string;
export declare const TOOLS: Readonly<Record<string, string>>;
export declare function podmanArgs(args: readonly string[]): string[];
export declare function podman(
  args: readonly string[],
  options?: { input?: string; inherit?: boolean; timeoutMs?: number },
): { status: number | null; stdout: string; stderr: string };
export declare function imageExists(name: string): boolean;
export declare function imageSize(name: string): number;
