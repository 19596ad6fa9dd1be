import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBuiltinScenario } from '../../src/llm/scenario';

export const ACA_BIN = path.resolve(__dirname, '..', '..', 'bin', 'aca.js');

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

let emptyFolder: string | null = null;

/**
 * An empty folder outside any git work tree, made once per test process: started inside a work
 * tree `aca run` works on that repository, and started in a folder with files that is not one it
 * refuses to run.
 */
export function emptyCwd(): string {
  emptyFolder ??= fs.mkdtempSync(path.join(os.tmpdir(), 'aca-cli-cwd-'));
  return emptyFolder;
}

/**
 * Runs the built `aca` command as a user would, with the given environment additions. It starts
 * in `cwd`, an empty folder outside any git work tree by default (see emptyCwd).
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 300_000,
  cwd: string = emptyCwd(),
  stdin?: string,
): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ACA_BIN, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (stdin !== undefined) {
      // A command that refuses its input stops reading early: the rest of the write then fails.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(stdin);
    }
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
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
