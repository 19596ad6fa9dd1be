export { codingAgentWorkflow } from './coding-agent';
export { evalBatchWorkflow } from './eval-batch';
