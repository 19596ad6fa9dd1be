import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBuiltinScenario } from '../../src/llm/scenario';

export const ACA_BIN = path.resolve(__dirname, '..', '..', 'bin', 'aca.js');

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `aca` command as a user would, with the given environment additions. It starts
 * in a folder outside any git work tree (`cwd`, the system's temporary folder by default): started
 * inside one, `aca run` works on that repository.
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 300_000,
  cwd: string = os.tmpdir(),
): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ACA_BIN, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`aca ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `aca run` of the built-in demo task on the scripted model, under `id`, with more options. */
export function demoRunArgs(id: string, ...more: string[]): string[] {
  return ['run', DEMO_TASK, '--model', 'scripted:demo-fizzbuzz', '--id', id, ...more];
}

const DEMO_TASK = loadBuiltinScenario('demo-fizzbuzz').task!;
