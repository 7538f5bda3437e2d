/**
 * What "described" means in the host tests (`discoverability.ts`), on made-up request bodies: no host runs here.
 */
import { describe, expect, it } from 'vitest';

import { describedCounts, type ServedSkill } from './discoverability.js';

const skill = (index: number): ServedSkill => ({
  name: `kubernetes-helper-${String(index).padStart(3, '0')}`,
  description: `Reviews, writes and fixes kubernetes code, task ${index}. Use when the user mentions kubernetes.`,
  uri: `skill://kubernetes-helper-${String(index).padStart(3, '0')}/SKILL.md`,
});

describe('describedCounts', () => {
  it('counts a name next to its description, in any string of the body, whitespace collapsed', () => {
    const [one, eleven] = [skill(1), skill(11)];
    const body = {
      system: [{ type: 'text', text: `- ${one.name}:\n  ${one.description.replace('code, ', 'code,\n  ')}` }],
      tools: [{ name: 'read_skill', description: `Skills:\n- ${eleven.name}: ${eleven.description}` }],
    };
    expect(describedCounts(body, [one, eleven])).toEqual([1, 1]);
  });

  it('does not take "task 1." for a prefix of "task 11."', () => {
    const eleven = skill(11);
    expect(describedCounts({ text: `- ${skill(1).name}: ${eleven.description}` }, [skill(1), eleven])).toEqual([0, 0]);
  });

  it('needs the whole name, ending at most 200 characters before the description', () => {
    const one = skill(1);
    const far = `- ${one.name} (${'x'.repeat(200)}): ${one.description}`;
    const near = `- ${one.name} (skill://a/${one.name}/SKILL.md): ${one.description}`;
    const longer = `- ${one.name}-extra: ${one.description}`;
    expect(describedCounts({ far, near, longer }, [one])).toEqual([1]);
  });

  it('counts each place: twice in one string, once more in another', () => {
    const one = skill(1);
    const line = `- ${one.name}: ${one.description}`;
    expect(describedCounts({ a: `${line}\n${line}`, b: [line] }, [one])).toEqual([3]);
  });

  it('matches the first 120 characters of a longer description (hosts cut)', () => {
    const long: ServedSkill = { name: 'long', description: `${'word '.repeat(40)}end.`, uri: 'skill://long/SKILL.md' };
    const cut = `long: ${long.description.slice(0, 130)}…`;
    expect(describedCounts({ cut }, [long])).toEqual([1]);
    expect(describedCounts({ cut: cut.slice(0, 100) }, [long])).toEqual([0]);
  });
});
