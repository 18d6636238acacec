/**
 * Serving the registry over MCP (SPEC S9): `tools/list` gives every registry tool as the
 * model sees it, `tools/call` goes through {@link runTool} — the one pipeline — and a tool
 * result becomes MCP content that is said alone, with shown in `_meta` ({@link callResult}). A tool's question (SPEC S3.6) becomes `elicitation/create` when
 * the client declared elicitation; otherwise the call ends as an error result saying what was
 * asked. A call the policy asks about (SPEC S8.1) is put to the person the same way; without
 * elicitation it is a denial. Follows MCP revision 2025-11-25 through the official SDK.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  type CreateMessageRequest,
  type ElicitRequest,
  ListToolsRequestSchema,
  type Tool as McpTool,
  type ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { AnswerProvider } from "../pipeline/ask.ts";
import { invalidParams, ToolsCallRequestSchema } from "./call_request.ts";
import { serveCatalog } from "./serve_catalog.ts";
import { plainNames, registryToolName, servedToolNames } from "./served_names.ts";
import { canComplete, serveCompletion } from "./serve_complete.ts";
import { canSubscribe, serveSubscriptions } from "./serve_subscribe.ts";
import type { ApprovalAnswer, Approver } from "../policy/gate.ts";
import { runTool, type ToolResult } from "../runtime/run_tool.ts";
import type { Progress, Question, Relay } from "../core/types.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { VERSION } from "../core/version.ts";

/** What magi knows about its builtins' effects (MCP tool annotations). */
export const BUILTIN_ANNOTATIONS: Readonly<Record<string, ToolAnnotations>> = {
  read: { readOnlyHint: true },
  grep: { readOnlyHint: true },
  write: { readOnlyHint: false, destructiveHint: true },
  edit: { readOnlyHint: false, destructiveHint: true },
  run: { readOnlyHint: false, destructiveHint: true },
};

/** Milliseconds a call runs before progress notifications start (and between them). */
export const PROGRESS_INTERVAL_MS = 1000;

/** The registry's tools as MCP `tools/list` gives them. */
export function listedTools(rt: Runtime): McpTool[] {
  const served = servedToolNames(rt.registry, plainNames(rt.config.values));
  return rt.registry.list().map((tool) => {
    const { name, description, parameters } = tool.declaration;
    const listed: McpTool = {
      name: served.get(name) ?? name,
      description,
      inputSchema: parameters as McpTool["inputSchema"],
    };
    const annotations = tool.origin.source === "builtin"
      ? BUILTIN_ANNOTATIONS[name]
      : tool.listing?.annotations;
    if (annotations) listed.annotations = { ...annotations };
    if (tool.listing?.title) listed.title = tool.listing.title;
    if (tool.listing?.outputSchema) {
      listed.outputSchema = tool.listing.outputSchema as McpTool["outputSchema"];
    }
    return listed;
  });
}

/** The `_meta` key under which a served result carries shown when it differs from said. */
export const SHOWN_META = "magi/shown";

/**
 * A tool result as an MCP `CallToolResult`. By default the content is said alone — one text
 * block, so a host that gives its model every text block (Claude Code ignores `audience`)
 * gives it exactly said — and shown, when it differs, travels in `_meta["magi/shown"]`, which
 * hosts never give their model. With `audiencePair` (config `mcp.audience_pair`), shown
 * follows said as a second text block and the two carry `audience: ["assistant"]` and
 * `["user"]`, for hosts that honour annotations. An error result is `isError: true` (never a
 * JSON-RPC error), its coded error in
 * `_meta["magi/error"]` (`{code, message}`).
 */
export function callResult(result: ToolResult, audiencePair = false): CallToolResult {
  const content: CallToolResult["content"] = [];
  const out: CallToolResult = { content };
  if (result.shown === result.said) {
    content.push({ type: "text", text: result.said });
  } else if (audiencePair) {
    content.push({ type: "text", text: result.said, annotations: { audience: ["assistant"] } });
    content.push({ type: "text", text: result.shown, annotations: { audience: ["user"] } });
  } else {
    content.push({ type: "text", text: result.said });
    out._meta = { [SHOWN_META]: result.shown };
  }
  // Images, audio and resources pass on as they came (masked); structured content too.
  for (const a of result.attachments ?? []) {
    content.push(a.block as unknown as CallToolResult["content"][number]);
  }
  if (result.structured) out.structuredContent = result.structured;
  if (result.is_error) {
    out.isError = true;
    // The coded error beside the prose, for clients that branch on it (`lib/core/errors.ts`).
    if (result.error) out._meta = { ...out._meta, "magi/error": result.error };
  }
  return out;
}

/** How the server reaches the runtime; a getter, because watching may rebuild it. */
export type RuntimeGetter = () => Runtime;

/**
 * Builds an MCP server for one connection. Each HTTP session and the stdio connection has
 * its own; they share the runtime the getter returns at each request.
 */
export function createMcpServer(current: RuntimeGetter): Server {
  const completes = canComplete();
  const subscribes = canSubscribe();
  const server = new Server(
    { name: "magi", version: VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        // Subscriptions go to the MCP servers magi reaches (serve_subscribe.ts).
        resources: subscribes ? { subscribe: true } : {},
        prompts: {},
        logging: {},
        // Only an MCP server magi reaches can complete what it serves.
        ...(completes ? { completions: {} } : {}),
      },
    },
  );
  const plain = () => plainNames(current().config.values);
  serveCatalog(server, plain, () => current().skills);
  if (completes) serveCompletion(server, plain);
  if (subscribes) serveSubscriptions(server);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools(current()) }));
  server.setRequestHandler(ToolsCallRequestSchema, async (request, extra) => {
    const rt = current();
    const name = registryToolName(
      rt.registry,
      plainNames(rt.config.values),
      request.params.name,
    );
    if (name === undefined) {
      throw invalidParams(`Unknown tool "${request.params.name}"`);
    }
    const token = request.params._meta?.progressToken;
    const progress = token === undefined ? undefined : progressReporter(name, token, extra);
    try {
      const result = await runTool(rt, {
        name,
        args: request.params.arguments ?? {},
        signal: extra.signal,
        // An MCP client is its own caller, never the person (SPEC S8.1).
        caller: "mcp",
        ...(progress ? { progress: progress.forward } : {}),
        relay: relayTo(server, extra.signal),
        ...(server.getClientCapabilities()?.elicitation
          ? { answer: elicitor(server, extra.signal), approve: approver(server, extra.signal) }
          : { unanswered: "the MCP client cannot be asked: it did not declare elicitation" }),
      });
      return callResult(result, rt.config.values["mcp.audience_pair"]);
    } finally {
      await progress?.stop();
    }
  });
  return server;
}

/**
 * The progress a client asked for with `progressToken`: a tick every
 * {@link PROGRESS_INTERVAL_MS} (progress in seconds, no total) until the tool reports its own
 * progress (an upstream MCP server's `notifications/progress`); from then on its reports are
 * forwarded, shifted past the ticks already sent so that progress only grows (MCP requires it).
 */
export function progressReporter(
  name: string,
  token: string | number,
  extra: { sendNotification: Server["notification"] },
): { forward: (p: Progress) => void; stop: () => Promise<void> } {
  let ticks = 0;
  let last = 0;
  // The notifications in flight: the result waits for them, so none arrives after it.
  let sent: Promise<void> = Promise.resolve();
  const send = (params: Progress) => {
    last = params.progress;
    const sending = extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: token, ...params },
    }).catch(() => {
      // The connection is gone; the call ends through its signal.
    });
    sent = sent.then(() => sending);
  };
  let timer: ReturnType<typeof setInterval> | undefined = setInterval(() => {
    ticks++;
    send({ progress: ticks, message: `"${name}" running for ${ticks} s` });
  }, PROGRESS_INTERVAL_MS);
  const halt = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return {
    forward: (p) => {
      halt();
      const shifted = { ...p, progress: p.progress + ticks };
      if (p.total !== undefined) shifted.total = p.total + ticks;
      if (shifted.progress > last) send(shifted);
    },
    stop: () => {
      halt();
      return sent;
    },
  };
}

/**
 * Asks the client's person a tool's question with `elicitation/create`: a form of one string
 * field `answer` (an enum when the question has choices). Accepted content gives the answer
 * (`answer`, else the only field, else the content as JSON).
 *
 * @throws Error when the person declines or cancels, so the call ends as an error result
 */
export function elicitor(server: Server, signal: AbortSignal): AnswerProvider {
  return async (question: Question) => {
    const answer = question.choices?.length
      ? { type: "string" as const, title: "Answer", enum: question.choices }
      : { type: "string" as const, title: "Answer" };
    const result = await server.elicitInput({
      mode: "form",
      message: question.question,
      requestedSchema: { type: "object", properties: { answer } },
    }, { signal });
    if (result.action !== "accept") {
      const how = result.action === "decline" ? "declined" : "cancelled";
      throw new Error(`the person ${how} the question ${JSON.stringify(question.question)}`);
    }
    const content = result.content ?? {};
    if (typeof content.answer === "string") return content.answer;
    const values = Object.values(content);
    return values.length === 1 ? String(values[0]) : JSON.stringify(content);
  };
}

/**
 * Where an upstream MCP server's requests during a call go: this client, for what it
 * declared — `sampling/createMessage` (its person and model answer, as MCP has clients do)
 * and `elicitation/create` with the server's own form. The pipeline masks both ways.
 */
export function relayTo(server: Server, signal: AbortSignal): Relay {
  const declared = server.getClientCapabilities() ?? {};
  const both = (other: AbortSignal) => AbortSignal.any([signal, other]);
  // The upstream's `_meta` (its progress token, say) belongs to its link with magi.
  const own = ({ _meta: _, ...params }: Record<string, unknown>) => params;
  return {
    owner: server,
    ...(declared.sampling
      ? {
        sampling: (params, other) =>
          server.createMessage(own(params) as CreateMessageRequest["params"], {
            signal: both(other),
          }),
      }
      : {}),
    ...(declared.elicitation
      ? {
        elicitation: (params, other) =>
          server.elicitInput(own(params) as ElicitRequest["params"], { signal: both(other) }),
      }
      : {}),
  };
}

const APPROVALS = ["yes", "no", "always"] as const;

/**
 * Asks the client's person, with `elicitation/create`, whether a call the policy asks about
 * may run: "yes", "no" or "always" (for this session). Declining or cancelling is "no".
 */
export function approver(server: Server, signal: AbortSignal): Approver {
  return async ({ tool, verdict }): Promise<ApprovalAnswer> => {
    const result = await server.elicitInput({
      mode: "form",
      message: `Allow "${tool}"? The policy asks: ${verdict.reason}`,
      requestedSchema: {
        type: "object",
        properties: {
          answer: { type: "string", title: "Allow", enum: [...APPROVALS] },
        },
        required: ["answer"],
      },
    }, { signal });
    const answer = result.action === "accept" ? result.content?.answer : "no";
    return APPROVALS.find((a) => a === answer) ?? "no";
  };
}
