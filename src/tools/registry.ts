import type { ModelJsonOptions } from '../shared/model-json';
import { FILE_TOOLS } from './file-tools';
import { finishTool, submitAnalysisTool, submitPlanTool } from './finishing-tools';
import { runCommandTool } from './run-command';
import { functionDefinition, parseArguments, type FunctionToolDefinition, type Tool } from './tool';

/** Every tool an agent can be offered, by name. docs/contract.md, section 3 lists which agent gets which. */
export const TOOLS = {
  ...FILE_TOOLS,
  run_command: runCommandTool,
  finish: finishTool,
  submit_plan: submitPlanTool,
  submit_analysis: submitAnalysisTool,
} as const;

export type ToolName = keyof typeof TOOLS;

export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(TOOLS, name);
}

export function toolDefinition(name: ToolName): FunctionToolDefinition {
  return functionDefinition(TOOLS[name] as Tool);
}

export function parseToolArguments(name: ToolName, rawArguments: string, options?: ModelJsonOptions) {
  return parseArguments<Tool['parameters']>(TOOLS[name] as Tool, rawArguments, options);
}
