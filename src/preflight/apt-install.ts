import { spawn } from 'node:child_process';
import { HOST_TOOL_ENV } from '../shared/executables';

/**
 * Runs `apt-get update` then `apt-get install -y <packages>`, passing apt's lines on as progress.
 * Resolves with apt's exit status instead of throwing: the caller re-checks what is missing
 * and reports that, which says more than "apt-get failed".
 */
export async function aptInstall(
  aptGet: string,
  packages: readonly string[],
  progress: (line: string) => void,
): Promise<number> {
  const env = { ...HOST_TOOL_ENV, DEBIAN_FRONTEND: 'noninteractive' };
  const update = await runStreaming(aptGet, ['update', '-qq'], env, progress);
  if (update !== 0) progress(`apt-get update exited with ${update}; trying the install anyway`);
  return runStreaming(
    aptGet,
    ['install', '-y', '-qq', '--no-install-recommends', ...packages],
    env,
    progress,
  );
}

function runStreaming(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    const onData = (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) progress(line.trimEnd());
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => {
      progress(`${command}: ${err.message}`);
      resolve(127);
    });
    child.on('close', (code) => {
      if (pending.trim()) progress(pending.trimEnd());
      resolve(code ?? 1);
    });
  });
}
