/** The workflows of a team's own worker: aca's, next to one of their own. */
export { codingAgentWorkflow } from 'aca-agent/workflows';

export async function greet(name: string): Promise<string> {
  return `Hello, ${name}!`;
}
