import type { Client, WorkflowHandle } from '@temporalio/client';
import { codingAgentWorkflow } from '../workflows';

/** A handle whose result, query, signals and update are typed by the workflow's own definitions. */
export type RunHandle = WorkflowHandle<typeof codingAgentWorkflow>;

/** The workflow type name, taken from the workflow function rather than spelled at call sites. */
export const RUN_WORKFLOW_TYPE = codingAgentWorkflow.name;

export function runHandle(client: Client, workflowId: string): RunHandle {
  return client.workflow.getHandle<typeof codingAgentWorkflow>(workflowId);
}

export { codingAgentWorkflow };
export { feedbackUpdate, pauseSignal, resumeSignal, stateQuery } from '../workflows/signals';
