/**
 * An MCP server over stdio that `magi mcp` reaches in the conformance test (config
 * `mcp_servers`, served with `mcp.plain_names`), so the suite's scenarios reach upstream items
 * through magi under the suite's own names: resources `test://static-text`,
 * `test://static-binary`, `test://watched-resource` (subscriptions) and the template
 * `test://template/{id}/data`; the tools
 * `test_image_content`, `test_audio_content`, `test_embedded_resource`,
 * `test_multiple_content_types`, `test_tool_with_logging`, `test_sampling` (asks its client,
 * magi, for a completion) and `test_elicitation_sep1034_defaults`/`…_sep1330_enums` (ask
 * their client to fill in a form); the prompts `test_simple_prompt`,
 * `test_prompt_with_arguments`, `test_prompt_with_embedded_resource` and
 * `test_prompt_with_image`; and completion (no values).
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// A 1×1 transparent PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const server = new Server({ name: "conformance-upstream", version: "1.0.0" }, {
  capabilities: {
    resources: { subscribe: true },
    tools: {},
    prompts: {},
    completions: {},
    logging: {},
  },
});

// A short silent WAV (8 kHz, 8-bit mono, no samples).
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const NO_ARGS = { type: "object" as const, properties: {} };

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
  ].map((name) => ({ name, description: `The conformance suite's ${name}`, inputSchema: NO_ARGS }))
    .concat([{
      name: "test_sampling",
      description: "The conformance suite's test_sampling: asks the client's model",
      inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
    } as never]),
}));

/** A form the client fills in, and what came back, as the suite's elicitation tools say it. */
async function elicited(message: string, properties: Record<string, unknown>) {
  const result = await server.elicitInput({
    mode: "form",
    message,
    requestedSchema: { type: "object", properties } as never,
  });
  const text = `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
  return { content: [{ type: "text", text }] };
}
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  switch (request.params.name) {
    case "test_image_content":
      return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
    case "test_audio_content":
      return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
    case "test_embedded_resource":
      return {
        content: [{
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        }],
      };
    case "test_multiple_content_types":
      return {
        content: [
          { type: "text", text: "Multiple content types test:" },
          { type: "image", data: PNG, mimeType: "image/png" },
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 }),
            },
          },
        ],
      };
    case "test_tool_with_logging": {
      const steps = ["Tool execution started", "Tool processing data", "Tool execution completed"];
      for (const [i, data] of steps.entries()) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await server.sendLoggingMessage({ level: "info", data });
      }
      return { content: [{ type: "text", text: "Tool with logging executed successfully" }] };
    }
    case "test_sampling": {
      const prompt = String(request.params.arguments?.prompt ?? "");
      const answer = await server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: prompt } }],
        maxTokens: 100,
      });
      const text = answer.content.type === "text" ? answer.content.text : `[${answer.content.type}]`;
      return { content: [{ type: "text", text: `LLM response: ${text}` }] };
    }
    case "test_elicitation_sep1034_defaults":
      return await elicited("Defaults for every primitive type", {
        name: { type: "string", default: "John Doe" },
        age: { type: "integer", default: 30 },
        score: { type: "number", default: 95.5 },
        status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", default: true },
      });
    case "test_elicitation_sep1330_enums":
      return await elicited("Five kinds of enum", {
        untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
        titledSingle: {
          type: "string",
          oneOf: [
            { const: "value1", title: "First Option" },
            { const: "value2", title: "Second Option" },
            { const: "value3", title: "Third Option" },
          ],
        },
        legacyEnum: {
          type: "string",
          enum: ["opt1", "opt2", "opt3"],
          enumNames: ["Option One", "Option Two", "Option Three"],
        },
        untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: {
          type: "array",
          items: {
            anyOf: [
              { const: "value1", title: "First Choice" },
              { const: "value2", title: "Second Choice" },
              { const: "value3", title: "Third Choice" },
            ],
          },
        },
      });
  }
  throw new McpError(-32602, `Unknown tool: ${request.params.name}`);
});

server.setRequestHandler(ListPromptsRequestSchema, () => ({
  prompts: [
    { name: "test_simple_prompt", description: "A simple prompt without arguments" },
    {
      name: "test_prompt_with_arguments",
      description: "A prompt with two arguments",
      arguments: [{ name: "arg1", required: true }, { name: "arg2", required: true }],
    },
    {
      name: "test_prompt_with_embedded_resource",
      description: "A prompt with an embedded resource",
      arguments: [{ name: "resourceUri", required: true }],
    },
    { name: "test_prompt_with_image", description: "A prompt with an image" },
  ],
}));
server.setRequestHandler(GetPromptRequestSchema, (request) => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case "test_simple_prompt":
      return {
        messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
      };
    case "test_prompt_with_arguments":
      return {
        messages: [{
          role: "user",
          content: { type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
        }],
      };
    case "test_prompt_with_embedded_resource":
      return {
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
            },
          },
          { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
        ],
      };
    case "test_prompt_with_image":
      return {
        messages: [
          { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
          { role: "user", content: { type: "text", text: "Please analyze the image above." } },
        ],
      };
  }
  throw new McpError(-32602, `Unknown prompt: ${request.params.name}`);
});
server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: [], hasMore: false } }));
server.setRequestHandler(ListResourcesRequestSchema, () => ({
  resources: [
    { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
    { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
    { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
  ],
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
  resourceTemplates: [
    { uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" },
  ],
}));
server.setRequestHandler(ReadResourceRequestSchema, (request) => {
  const uri = request.params.uri;
  if (uri === "test://static-text") {
    return {
      contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }],
    };
  }
  if (uri === "test://watched-resource") {
    return { contents: [{ uri, mimeType: "text/plain", text: `Watched ${watched.size} time(s).` }] };
  }
  if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
  const m = uri.match(/^test:\/\/template\/([^/]+)\/data$/);
  if (m) {
    return {
      contents: [{
        uri,
        mimeType: "application/json",
        text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }),
      }],
    };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`);
});
// Subscriptions (the suite's resources-subscribe and -unsubscribe reach it through magi).
const watched = new Set<string>();
server.setRequestHandler(SubscribeRequestSchema, (request) => {
  watched.add(request.params.uri);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
  watched.delete(request.params.uri);
  return {};
});
await server.connect(new StdioServerTransport());
