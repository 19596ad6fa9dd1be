/**
 * A workflow that only calls runCommand, once per tool call it is given, one after another: what
 * a run_command call costs through Temporal (see run-command.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { RunCommandInput } from '../src/activities/command-activities';

const { runCommand } = proxyActivities<{ runCommand(input: RunCommandInput): Promise<unknown> }>({
  startToCloseTimeout: '60s',
});

export async function runCommandsWorkflow(inputs: RunCommandInput[]): Promise<void> {
  for (const input of inputs) await runCommand(input);
}
