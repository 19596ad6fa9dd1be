import { runStaticDetails, webUiRunPath } from '../../../src/api/run-static-details';
import type { RunInput, RunLink } from '../../../src/shared/run-types';

const input = (link: Partial<RunLink> | null): RunInput =>
  ({
    task: 'Fix the parser',
    language: 'python',
    model: 'gpt-4o-mini',
    workspace: '/w/run',
    link: link && {
      kind: 'fork',
      parentRun: 'run-1',
      attemptsBefore: 2,
      ...link,
    },
  }) as unknown as RunInput;

describe("a run's static details in the Web UI", () => {
  test('a run of its own has its task and settings, and no parent', () => {
    const details = runStaticDetails(input(null), 'default');
    expect(details).toBe(
      '**Task:** Fix the parser\n\n**Language:** python · **Model:** gpt-4o-mini · **Workspace:** /w/run',
    );
  });

  test.each([
    ['fork', '**Forked from:** [run-1](/namespaces/default/workflows/run-1) at attempt 3'],
    ['retry', '**Retries:** [run-1](/namespaces/default/workflows/run-1) after its attempt 2'],
    ['continue', '**Continues:** [run-1](/namespaces/default/workflows/run-1)'],
  ] as const)('a %s opens with a link to its parent', (kind, line) => {
    const details = runStaticDetails(input({ kind }), 'default');
    expect(details.split('\n\n')[0]).toBe(line);
    expect(details).toContain('**Task:** Fix the parser');
  });

  test('ids and namespaces are encoded in the path and escaped in the link text', () => {
    expect(webUiRunPath('team a', 'fix/1 [x] (2)')).toBe(
      '/namespaces/team%20a/workflows/fix%2F1%20%5Bx%5D%20%282%29',
    );
    const details = runStaticDetails(input({ parentRun: 'a_[b]*' }), 'ns');
    expect(details.split('\n\n')[0]).toBe(
      '**Forked from:** [a\\_\\[b\\]\\*](/namespaces/ns/workflows/a_%5Bb%5D*) at attempt 3',
    );
  });
});
