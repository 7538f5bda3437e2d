/**
 * The judgements of the load benchmark (bench/load-tracker.mjs): a read of a replaced digest is caught, bytes nobody
 * published or wrote are caught, and the leak check compares the last third of a run with the second.
 */
import { describe, expect, it } from 'vitest';

import { leakCheck, percentile, PublishHistory } from '../../bench/load-tracker.mjs';

const U = 'skill://a/notes.md';
const never = (): boolean => false;

describe('PublishHistory.judge', () => {
  it.each([
    // [observations (digest, asked, answered)], read (digest, sent), written?, verdict
    ['the only published digest', [['d1', 0, 10]], ['d1', 20], never, 'ok'],
    [
      'the old digest, read sent before the replacement was seen',
      [
        ['d1', 0, 10],
        ['d2', 30, 40],
      ],
      ['d1', 35],
      never,
      'ok',
    ],
    [
      'the old digest, read sent after an answer showed the new one',
      [
        ['d1', 0, 10],
        ['d2', 30, 40],
      ],
      ['d1', 41],
      never,
      'stale',
    ],
    [
      'the new digest, read sent after',
      [
        ['d1', 0, 10],
        ['d2', 30, 40],
      ],
      ['d2', 41],
      never,
      'ok',
    ],
    [
      'the old digest seen again after the replacement (a race between answers)',
      [
        ['d1', 0, 10],
        ['d2', 30, 40],
        ['d1', 35, 45],
      ],
      ['d1', 50],
      never,
      'ok',
    ],
    [
      'a replacement that may have come first (its answer was asked before the old one arrived)',
      [
        ['d2', 0, 40],
        ['d1', 5, 10],
      ],
      ['d1', 50],
      never,
      'ok',
    ],
    ['bytes never published but written by the churn', [['d1', 0, 10]], ['d9', 20], (): boolean => true, 'unobserved'],
    ['bytes never published and never written', [['d1', 0, 10]], ['d9', 20], never, 'foreign'],
  ])('%s', (_label, observations, [digest, sentAt], written, verdict) => {
    const history = new PublishHistory();
    for (const [seen, asked, answered] of observations as [string, number, number][])
      history.observe(U, seen, asked, answered);
    expect(history.judge(U, digest as string, sentAt as number, written)).toBe(verdict);
  });

  it('a notifications/resources/updated replaces every digest published before it', () => {
    const history = new PublishHistory();
    history.observe(U, 'd1', 0, 10);
    history.replaced(U, 20);
    expect(history.judge(U, 'd1', 15, never)).toBe('ok');
    expect(history.judge(U, 'd1', 25, never)).toBe('stale');
  });
});

describe('leakCheck', () => {
  const run = (values: number[]): { at: number; value: number }[] =>
    values.map((value, index) => ({ at: index * 100, value }));

  it('passes a flat run after warm-up and fails a growing one', () => {
    const tolerance = { relative: 0.1, absolute: 2 };
    expect(leakCheck(run([10, 50, 90, 100, 101, 99, 100, 102, 101]), tolerance).ok).toBe(true);
    const growing = leakCheck(run([10, 50, 90, 100, 110, 120, 130, 140, 150]), tolerance);
    expect(growing.ok).toBe(false);
    expect(growing.second).toBeCloseTo(110);
    expect(growing.last).toBeCloseTo(140);
  });

  it('needs enough samples to judge', () => {
    expect(leakCheck(run([1, 2, 3]), { relative: 0.1, absolute: 1 }).ok).toBe(false);
  });
});

describe('percentile', () => {
  it('takes the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, index) => index + 1),
        0.99,
      ),
    ).toBe(99);
    expect(percentile([], 0.5)).toBeNaN();
  });
});
