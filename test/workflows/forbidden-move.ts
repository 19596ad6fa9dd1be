import { RunStateMachine } from '../../src/workflows/state-machine';

export { codingAgentWorkflow } from '../../src/workflows';

/** A workflow with a bug the table must catch: it jumps from INIT straight to TESTING. */
export async function forbiddenMoveWorkflow(): Promise<string> {
  const machine = new RunStateMachine(undefined, () => undefined);
  machine.move('PLANNING');
  machine.move('TESTING');
  return machine.state;
}
