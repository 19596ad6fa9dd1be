/**
 * MCP servers as agents' tools: the worker's configuration (ACA_MCP_CONFIG), the pool of servers
 * it keeps, the function names tools are offered under, and their answers as untrusted text.
 */
export {
  AGENT_ROLES,
  DEFAULT_MCP_ROLES,
  McpConfigFileError,
  parseMcpConfig,
  readMcpConfigFile,
  stdioEnvironment,
  type HttpServerConfig,
  type McpConfig,
  type McpServerConfig,
  type StdioServerConfig,
} from './mcp-config';
export {
  DEFAULT_CONNECTION_TIMINGS,
  McpPool,
  offeredMcpTools,
  UnknownMcpServerError,
  type McpPoolOptions,
  type McpServerStatus,
  type McpToolDefinition,
  type OfferedMcpToolShape,
} from './mcp-pool';
export { McpServerUnavailableError, type McpCallOutcome } from './server-connection';
export { MAX_MCP_ANSWER_CHARS, mcpContentText, mcpToolAnswer, untrustedText } from './mcp-result';
export {
  FUNCTION_NAME,
  MCP_FUNCTION_PREFIX,
  mcpServerOfFunction,
  toolFunctionNames,
  type ToolNameMap,
} from './tool-names';
export type { ListedTool } from './listed-tools';
export { mcpQueueFor } from '../shared/host-queues';
