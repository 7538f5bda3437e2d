/** The one error path (src/errors.ts): what a request answers for each kind of failure, and what is reported. */
import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { asProtocolErrors, SkillsServeError, toProtocolError } from '../../src/errors.js';

describe('toProtocolError', () => {
  it('maps a domain error through the table, keeps a ProtocolError, and reports nothing for either', () => {
    const reported: unknown[] = [];
    const notFound = toProtocolError(new SkillsServeError('SKILL_NOT_FOUND', 'skill://a/SKILL.md is not served'), (e) =>
      reported.push(e),
    );
    expect([notFound.code, notFound.message]).toEqual([-32602, 'skill://a/SKILL.md is not served']);
    const given = new ProtocolError(-32601, 'Method not found');
    expect(toProtocolError(given, (e) => reported.push(e))).toBe(given);
    expect(reported).toEqual([]);
  });

  it('answers anything else with -32603 "Internal error", never its message, and reports the error itself', () => {
    const reported: unknown[] = [];
    const bug = new TypeError("Cannot read properties of undefined (reading 'x') at /home/me/skills/a/SKILL.md");
    const answer = toProtocolError(bug, (e) => reported.push(e));
    expect([answer.code, answer.message]).toEqual([-32603, 'Internal error']);
    expect(reported).toEqual([bug]);
  });
});

describe('asProtocolErrors', () => {
  it('passes results through and throws failures as toProtocolError maps them, for sync and async actions', async () => {
    const reported: unknown[] = [];
    await expect(
      asProtocolErrors(
        () => 42,
        (e) => reported.push(e),
      ),
    ).resolves.toBe(42);
    await expect(
      asProtocolErrors(
        async () => {
          await Promise.resolve();
          throw new Error('/host/path leaked?');
        },
        (e) => reported.push(e),
      ),
    ).rejects.toMatchObject({ code: -32603, message: 'Internal error' });
    await expect(
      asProtocolErrors(
        () => {
          throw new SkillsServeError('INVALID_CURSOR', 'Invalid cursor');
        },
        (e) => reported.push(e),
      ),
    ).rejects.toMatchObject({ code: -32602, message: 'Invalid cursor' });
    expect(reported.map((e) => (e as Error).message)).toEqual(['/host/path leaked?']);
  });
});
