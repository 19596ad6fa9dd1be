export { codingAgentWorkflow } from './coding-agent';
