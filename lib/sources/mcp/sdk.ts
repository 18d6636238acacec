/**
 * The MCP client SDK and magi's stdio transport, as one module that lib/sources/mcp/client.ts
 * loads with `lateImport` on a server's first start: neither Deno's start-up nor a start
 * with every tool list cached pays for the SDK (see lib/core/lazy_require.ts).
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { ChildStdioTransport } from "./stdio.ts";

export { ChildStdioTransport, Client, ElicitRequestSchema, ErrorCode, McpError };
export { LoggingMessageNotificationSchema, StreamableHTTPClientTransport };
export {
  CreateMessageRequestSchema,
  ProgressNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
};
