import { spawn, type ChildProcess } from 'node:child_process';
import { workflowBundleFile } from './agent-harness';
import { ACA_BIN } from './run-cli';

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `aca worker` as its own process, so a test can SIGKILL it like a crashed machine. It loads
 * the test run's workflow bundle (ACA_WORKFLOW_BUNDLE) unless `env` names another or none.
 */
export async function spawnWorker(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const bundle = await workflowBundleFile();
  const child = spawn(process.execPath, [ACA_BIN, 'worker'], {
    env: { ...process.env, ...(bundle ? { ACA_WORKFLOW_BUNDLE: bundle } : {}), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in 60 s:\n${output}`)), 60_000);
    const check = (): void => {
      if (output.includes('aca worker polling')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before polling:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
