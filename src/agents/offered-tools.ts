import type OpenAI from 'openai';
import type { Conversation, OfferedMcpTool } from '../store/conversation-store';
import { toolDefinition, type ToolName } from '../tools/registry';
import { AGENT_SPECS } from './agent-specs';

/** The tools a turn's model is offered: its role's, `run_command` where allowed, and MCP tools. */
export interface TurnTools {
  /** Every name the model may call, in the order offered. */
  names: string[];
  builtIn: ToolName[];
  mcp: ReadonlyMap<string, OfferedMcpTool>;
  definitions: OpenAI.Chat.ChatCompletionTool[];
}

export function turnTools(conversation: Conversation): TurnTools {
  const spec = AGENT_SPECS[conversation.role];
  const offered = conversation.offered;
  const builtIn = spec.tools.filter((name) => name !== 'run_command' || offered?.runCommand === true);
  const mcpTools = offered?.mcp ?? [];
  // A server's tool never shadows one of aca's own: the model would call one thinking of the other.
  const mcp = new Map(
    mcpTools.filter((tool) => !builtIn.includes(tool.name as ToolName)).map((tool) => [tool.name, tool]),
  );
  return {
    names: [...builtIn, ...mcp.keys()],
    builtIn,
    mcp,
    definitions: [
      ...builtIn.map(toolDefinition),
      ...[...mcp.values()].map((tool) => ({
        type: 'function' as const,
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      })),
    ],
  };
}
