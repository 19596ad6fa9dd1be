/**
 * A deliberately changed codingAgentWorkflow: it starts with a timer the recorded runs never
 * had. Replaying saved histories against it must fail; that is what makes the replay suite a guard.
 */
import { sleep } from '@temporalio/workflow';

export async function codingAgentWorkflow(): Promise<void> {
  await sleep('1 second');
}
