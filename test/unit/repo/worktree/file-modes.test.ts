/**
 * A file's mode survives the tools that rewrite it, the run's commit and `aca apply`: an
 * executable script the Coder edits is still executable on the user's branch. The mode changes
 * only when a tool call says so.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyRun, commitAll, createRunWorktree } from '../../../../src/repo';
import { executeFileTool } from '../../../../src/tools/file-tools';
import { makeUserRepo, userGit } from '../../../helpers/run-fixture';

describe('file modes through the file tools, the commit and apply', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-modes-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const modeOf = (file: string) => fs.statSync(file).mode & 0o7777;

  test('edit_file and create_file keep 0755; executable true/false set it; set-id bits never carry over', async () => {
    const ws = fs.mkdtempSync(path.join(root, 'ws-'));
    fs.writeFileSync(path.join(ws, 'run.sh'), '#!/bin/sh\necho old\n', { mode: 0o755 });
    fs.chmodSync(path.join(ws, 'run.sh'), 0o755);
    const call = (name: 'edit_file' | 'create_file', args: object) =>
      executeFileTool({ workspace: ws, protectedPaths: [] }, name, JSON.stringify(args));

    expect(await call('edit_file', { path: 'run.sh', old_string: 'old', new_string: 'new' })).toMatchObject({
      ok: true,
    });
    expect(modeOf(path.join(ws, 'run.sh'))).toBe(0o755);
    expect(await call('create_file', { path: 'run.sh', content: '#!/bin/sh\necho whole\n' })).toMatchObject({
      ok: true,
    });
    expect(modeOf(path.join(ws, 'run.sh'))).toBe(0o755);
    await call('create_file', { path: 'run.sh', content: '#!/bin/sh\n', executable: false });
    expect(modeOf(path.join(ws, 'run.sh'))).toBe(0o644);
    await call('create_file', { path: 'tool.sh', content: '#!/bin/sh\n', executable: true });
    expect(modeOf(path.join(ws, 'tool.sh'))).toBe(0o755);
    await call('create_file', { path: 'plain.py', content: 'x = 1\n' });
    expect(modeOf(path.join(ws, 'plain.py'))).toBe(0o644);

    fs.chmodSync(path.join(ws, 'tool.sh'), 0o4755);
    await call('edit_file', { path: 'tool.sh', old_string: '#!/bin/sh', new_string: '#!/bin/bash' });
    expect(modeOf(path.join(ws, 'tool.sh'))).toBe(0o755);
  });

  test('an executable script edited by the run lands on the user branch as 100755', async () => {
    const repo = makeUserRepo(path.join(root, 'repo'), { 'bin/deploy.sh': '#!/bin/sh\necho staging\n' });
    userGit(repo, 'update-index', '--chmod=+x', 'bin/deploy.sh');
    userGit(repo, 'commit', '-q', '-m', 'executable');
    userGit(repo, 'reset', '-q', '--hard');
    expect(userGit(repo, 'ls-files', '-s', 'bin/deploy.sh')).toMatch(/^100755 /);

    const workTree = path.join(root, 'run-ws');
    const worktree = await createRunWorktree({ repoDir: repo, workTree, branch: 'aca/modes', base: 'HEAD' });
    const edited = await executeFileTool(
      { workspace: workTree, protectedPaths: [] },
      'edit_file',
      JSON.stringify({ path: 'bin/deploy.sh', old_string: 'staging', new_string: 'production' }),
    );
    expect(edited).toMatchObject({ ok: true });
    const head = await commitAll(worktree, 'aca: attempt 1, coder: deploy to production');
    expect(head).not.toBeNull();
    const result = await applyRun({
      repoDir: repo,
      commonDir: worktree.commonDir,
      base: worktree.baseCommit,
      head: head!,
      message: 'Deploy to production\n',
    });
    expect(result.applied).toBe(true);
    expect(userGit(repo, 'ls-files', '-s', 'bin/deploy.sh')).toMatch(/^100755 /);
    expect(userGit(repo, 'show', 'HEAD', '--format=', '--summary')).not.toContain('mode change');
    expect(fs.statSync(path.join(repo, 'bin/deploy.sh')).mode & 0o111).toBe(0o111);
  });
});
