import * as fs from 'node:fs';
import type { AcaClient } from '../api/aca-client';
import { validateRunRequest, type StartRunRequest, type ValidRunRequest } from '../api/run-request';
import type { AcaConfig } from '../config';
import { parseDuration } from '../shared/duration';
import { UserInputError } from '../shared/errors';
import type { RunResult } from '../shared/run-types';
import type { Language } from '../shared/types';
import { positiveInteger } from '../shared/option-numbers';
import { jsonForTerminal, printableLine } from '../shared/terminal-text';
import { EXIT, type CliIO } from './cli-context';
import { followRun } from './follow-run';
import { summaryLines } from './progress';
import { readRunResult } from '../shared/run-failure';
import { readInstructionsFile } from './instructions-file';
import { pauseSignal } from '../workflows/signals';
import { enclosingWorkTree } from '../repo';
import { missingWorker } from '../temporal/task-queue-pollers';

/** How long `aca run` and `aca watch` wait for a worker to poll before they say none does. */
const NO_WORKER_GRACE_MS = 3_000;

/** `aca run`'s options as commander hands them over: values unparsed, checked below. */
export interface RunFlags {
  /** `--task-file`: read by readTask before the rest is checked. */
  taskFile?: string;
  language?: string;
  workspace?: string;
  tests?: string;
  maxIterations?: string;
  warnAt?: string;
  maxTokens?: string;
  maxCost?: string;
  model?: string;
  id?: string;
  detach?: boolean;
  json?: boolean;
  modelTimeout?: string;
  maxSteps?: string;
  /** A folder, or false for `--no-repo`. */
  repo?: string | false;
  replace?: boolean;
  base?: string;
  testCmd?: string;
  setupCmd?: string;
  setupNetwork?: boolean;
  /** `--no-failure-memory`: commander sets it false. */
  failureMemory?: boolean;
  onLimit?: string;
  askTimeout?: string;
  target?: string[];
  memory?: string;
  wallTime?: string;
  /** `--instructions FILE`: read here, before anything is started. */
  instructions?: string;
}

/** `aca run` after its options are checked: the run's id and input, and how to follow it. */
export interface RunRequest extends ValidRunRequest {
  detach: boolean;
  json: boolean;
}

/** Turns `aca run`'s task and options into a checked request, or a UserInputError naming what is wrong. */
export async function parseRunRequest(task: string, flags: RunFlags, config: AcaConfig): Promise<RunRequest> {
  const notices: string[] = [];
  let repo = typeof flags.repo === 'string' ? flags.repo : undefined;
  // Started inside a checkout, a user means that project (as other coding agents take it); an
  // empty workspace there would have every read of the project fail and tests pass on nothing.
  if (flags.repo === undefined && flags.workspace === undefined) {
    const cwd = process.cwd();
    const here = await enclosingWorkTree(cwd);
    if (here) {
      repo = here;
      notices.push(
        `Working on the repository at ${here} (started inside it); --no-repo gives a fresh folder.`,
      );
    } else if (holdsFiles(cwd)) {
      // A fresh workspace would not see these files: every read would fail and the tests pass on nothing.
      throw new UserInputError(
        `${cwd} holds files but is not a git work tree, so a run could not see them: \`git init && git add -A && git commit -m start\` makes it one aca works on, or --no-repo runs in a fresh folder`,
      );
    }
  }
  const request: StartRunRequest = {
    task,
    ...(flags.language !== undefined ? { language: flags.language as Language } : {}),
    ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
    ...(flags.tests !== undefined ? { testsDir: flags.tests } : {}),
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.id !== undefined ? { id: flags.id } : {}),
    ...(repo !== undefined ? { repo } : {}),
    ...(flags.base !== undefined ? { base: flags.base } : {}),
    ...(flags.testCmd !== undefined ? { testCommand: flags.testCmd } : {}),
    ...(flags.setupCmd !== undefined ? { setupCommand: flags.setupCmd } : {}),
    ...(flags.setupNetwork ? { setupNetwork: true } : {}),
    ...(flags.target !== undefined ? { targets: flags.target } : {}),
    ...(flags.failureMemory === false ? { failureMemory: false } : {}),
    ...(flags.instructions !== undefined ? { instructions: readInstructionsFile(flags.instructions) } : {}),
  };
  const numbers: Array<[keyof StartRunRequest, string | undefined, string]> = [
    ['maxIterations', flags.maxIterations, 'max-iterations'],
    ['warnAt', flags.warnAt, 'warn-at'],
    ['maxTokens', flags.maxTokens, 'max-tokens'],
    ['modelTimeoutSeconds', flags.modelTimeout, 'model-timeout'],
    ['maxSteps', flags.maxSteps, 'max-steps'],
    ['memoryMiB', flags.memory, 'memory'],
    ['wallTimeSeconds', flags.wallTime, 'wall-time'],
  ];
  for (const [key, value, name] of numbers) {
    const n = positiveInteger(value, name);
    if (n !== undefined) Object.assign(request, { [key]: n });
  }
  if (flags.maxCost !== undefined) request.maxCostUsd = dollars(flags.maxCost);
  if (flags.onLimit !== undefined) request.onLimit = flags.onLimit as 'fail' | 'ask';
  if (flags.askTimeout !== undefined) request.askTimeoutMs = parseDuration(flags.askTimeout, 'ask-timeout');
  const valid = await validateRunRequest(request, config);
  return {
    ...valid,
    warnings: [...notices, ...valid.warnings],
    detach: flags.detach === true,
    json: flags.json === true,
  };
}

/** Whether a folder has anything in it (an unreadable folder counts as holding files: nothing is assumed). */
function holdsFiles(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return true;
  }
}

export function exitCodeFor(result: RunResult): number {
  if (result.state === 'SUCCESS') return EXIT.success;
  // A target no test of the base commit belongs to is bad input, found before any model call.
  if (result.unknownTargets?.length) return EXIT.badInput;
  return result.reason === 'cancelled' ? EXIT.cancelled : EXIT.failed;
}

/** Follows a started run to its end, printing progress and a summary (or one JSON object). */
export async function attachToRun(
  aca: AcaClient,
  workflowId: string,
  io: CliIO,
  options: { json: boolean; interruptPauses: boolean },
): Promise<number> {
  const { handle } = aca.run(workflowId);
  const { startTime, taskQueue, status } = await handle.describe();
  if (status.name === 'RUNNING') {
    // A worker this process started may still be connecting: a few seconds' grace.
    const missing = await missingWorker(aca.temporal, taskQueue, NO_WORKER_GRACE_MS);
    if (missing) io.err(`warning: ${missing}; the run waits until one does`);
  }
  const followed = await followRun(handle, io, { quiet: options.json, startedAt: startTime.getTime() });
  if (followed.kind === 'interrupted') {
    // Ctrl-C: `aca run` pauses the run (nothing new starts until `aca resume`); `aca watch`
    // only stops watching. Either way the exit code says "interrupted", never "succeeded".
    if (options.interruptPauses) {
      try {
        await handle.signal(pauseSignal);
      } catch (err) {
        // The run ended between the Ctrl-C and the signal: report how it ended instead.
        if ((await handle.describe()).status.name === 'RUNNING') throw err;
        return report(await readRunResult(handle));
      }
      io.err(
        `\n${printableLine(`Paused ${workflowId}. Resume it with \`aca resume ${workflowId}\` and re-attach with \`aca watch ${workflowId}\`.`)}`,
      );
    } else {
      io.err(
        `\n${printableLine(`Stopped watching ${workflowId}; the run goes on. Re-attach with \`aca watch ${workflowId}\`.`)}`,
      );
    }
    return EXIT.cancelled;
  }
  return report(followed.result);

  function report(result: RunResult): number {
    if (options.json) io.out(jsonForTerminal(result));
    else for (const line of summaryLines(result, aca.webUrl(workflowId))) io.out(line);
    const code = exitCodeFor(result);
    if (code === EXIT.badInput && result.error) io.err(`aca: ${result.error}`);
    return code;
  }
}

/** A dollar amount as typed: `0.50`, `2`, `$1.25`. */
export function dollars(text: string): number {
  const trimmed = text.trim().replace(/^\$/, '');
  const value = /^\d+(\.\d+)?$|^\.\d+$/.test(trimmed) ? Number(trimmed) : NaN;
  if (!(value > 0))
    throw new UserInputError(`--max-cost must be a positive number of dollars, got "${text}"`);
  return value;
}
