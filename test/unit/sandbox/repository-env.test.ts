/** A repository's own variables (`aca eval --specs`) as they reach a runner's environment. */
import { withRepositoryEnv } from '../../../src/sandbox';
import { pythonPathFolders, testEnvProblem } from '../../../src/shared/test-env';

describe('the variables in the test process', () => {
  test("the runner's own values win; PYTHONPATH's folders from the workspace, before aca's", () => {
    const env = withRepositoryEnv(
      { PATH: '/usr/bin', PYTHONPATH: '/aca/runner', HOME: '/tmp/h' },
      { PYTHONPATH: 'src:./lib/:', FLAG: 'on' },
      '/workspace',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/tmp/h',
      FLAG: 'on',
      PYTHONPATH: '/workspace/src:/workspace/lib:/aca/runner',
    });
    expect(pythonPathFolders({ PYTHONPATH: '.:src' })).toEqual(['.', 'src']);
  });

  test('a refused variable that reaches the sandbox anyway stops the run', () => {
    expect(testEnvProblem({ LD_AUDIT: 'x.so' })).toMatch(/reserved/);
    expect(() => withRepositoryEnv({}, { LD_AUDIT: 'x.so' }, '/workspace')).toThrow(/refused/);
  });
});
