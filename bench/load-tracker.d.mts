/** Types of `load-tracker.mjs` (plain JavaScript, run by bench/load.mjs; typed for the tests that share it). */
export type ReadJudgement = 'ok' | 'stale' | 'unobserved' | 'foreign';

export declare class PublishHistory {
  observe(uri: string, digest: string | undefined, requestedAt: number, answeredAt: number): void;
  replaced(uri: string, at: number): void;
  has(uri: string, digest: string): boolean;
  judge(uri: string, digest: string, sentAt: number, written: (uri: string, digest: string) => boolean): ReadJudgement;
}

export declare function percentile(values: readonly number[], p: number): number;

export interface LeakCheck {
  second: number;
  last: number;
  growth: number;
  allowed: number;
  ok: boolean;
}
export declare function leakCheck(
  samples: readonly { at: number; value: number }[],
  tolerance: { relative: number; absolute: number },
): LeakCheck;

/** A seeded xorshift32 generator: the same sequence for the same seed; each call returns the next value in [0, 1). */
export declare function seededRandom(seed: number): () => number;
