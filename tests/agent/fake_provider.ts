/**
 * Scripted providers for tests: a real HTTP server on loopback that answers each request
 * with the next scripted reply, streaming Server-Sent Events in the OpenAI Chat
 * Completions or Anthropic Messages wire format, and records every request it received.
 * The events are written here from the public API references, not recorded.
 *
 * @module
 */

/** One scripted reply. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body (for errors). */
  json?: unknown;
  /** SSE frames, each already formatted (`data: …\n\n`). */
  sse?: string[];
  /** End the connection abruptly after the frames (a dropped stream). */
  cut?: boolean;
  /** Send nothing more after the frames, and never end (a stalled stream). */
  stall?: boolean;
  /** Send every frame at once instead of one a millisecond (long scripted sessions). */
  burst?: boolean;
  /** Send the first `after` frames, then wait for `until` before the rest (a slow model). */
  pause?: { after: number; until: Promise<unknown> };
}

/** A request as the server received it. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
}

/** A scripted provider server; `await using` closes it. */
export interface ScriptedServer extends AsyncDisposable {
  /** Base URL: `http://127.0.0.1:PORT/v1` for OpenAI, `http://127.0.0.1:PORT` for Anthropic. */
  url: string;
  requests: Received[];
}

/**
 * Starts a server that answers requests with `replies` in order (a function gets the
 * request's index). Past the script's end it answers 500.
 */
export function scriptedServer(
  kind: "openai" | "anthropic",
  replies: Reply[] | ((index: number, request: Received) => Reply),
): ScriptedServer {
  const requests: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    let json = {};
    try {
      json = JSON.parse(body);
    } catch { /* not JSON */ }
    const received = {
      path: new URL(req.url).pathname,
      headers: Object.fromEntries(req.headers),
      body,
      json,
    };
    const index = requests.push(received) - 1;
    const reply = typeof replies === "function" ? replies(index, received) : replies[index];
    if (!reply) return Response.json({ error: { message: "script ended" } }, { status: 500 });
    if (reply.json !== undefined || !reply.sse) {
      return Response.json(reply.json ?? {}, {
        status: reply.status ?? 200,
        headers: reply.headers,
      });
    }
    const frames = reply.sse;
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const [i, frame] of frames.entries()) {
          if (reply.pause && i === reply.pause.after) await reply.pause.until;
          controller.enqueue(encoder.encode(frame));
          if (!reply.burst) await new Promise((r) => setTimeout(r, 1));
        }
        // A cut stream promised more bytes (content-length) than it sends: the connection
        // closes early and the client reads an incomplete body.
        if (!reply.stall) controller.close();
      },
    });
    return new Response(stream, {
      status: reply.status ?? 200,
      headers: {
        "content-type": "text/event-stream",
        ...(reply.cut ? { "content-length": "1000000" } : {}),
        ...reply.headers,
      },
    });
  });
  const port = server.addr.port;
  return {
    url: kind === "openai" ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

// ---- OpenAI Chat Completions (stream: true) ----

let created = 1_700_000_000;

/** One `chat.completion.chunk` frame. */
export function oaChunk(
  delta: Record<string, unknown>,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
): string {
  const chunk = {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: created++,
    model: "test-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The usage-only chunk sent with `stream_options.include_usage`. */
export function oaUsage(prompt = 10, completion = 5): string {
  return `data: ${
    JSON.stringify({
      id: "chatcmpl-test",
      object: "chat.completion.chunk",
      created: created++,
      model: "test-model",
      choices: [],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
    })
  }\n\n`;
}

export const OA_DONE = "data: [DONE]\n\n";

/** A tool call the script makes. */
export interface ScriptCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * A reference-form stream: role, text in pieces, each call's first delta (index, id, name,
 * empty arguments) then its arguments in two fragments, the finish chunk, usage, `[DONE]`.
 */
export function openaiReply(text: string, calls: ScriptCall[] = []): Reply {
  const sse = [oaChunk({ role: "assistant", content: "" })];
  for (const piece of text.match(/.{1,7}/gs) ?? []) sse.push(oaChunk({ content: piece }));
  calls.forEach((c, index) => {
    sse.push(oaChunk({
      tool_calls: [{
        index,
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: "" },
      }],
    }));
    const args = JSON.stringify(c.args);
    const half = Math.floor(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)]) {
      sse.push(oaChunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  sse.push(oaChunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  sse.push(oaUsage(), OA_DONE);
  return { sse };
}

// ---- Anthropic Messages (stream: true) ----

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** A `ping` event (may come anywhere in a stream). */
export const PING = event("ping", {});

/**
 * A reference-form stream: message_start, ping, a text block in pieces, one tool_use block
 * per call with its input as input_json_delta fragments, message_delta with the stop
 * reason, message_stop.
 */
export function anthropicReply(text: string, calls: ScriptCall[] = []): Reply {
  const sse = [
    event("message_start", {
      message: {
        id: "msg_test",
        type: "message",
        role: "assistant",
        model: "test-model",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
    PING,
  ];
  let index = 0;
  if (text !== "") {
    sse.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const piece of text.match(/.{1,7}/gs) ?? []) {
      sse.push(event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }));
    }
    sse.push(event("content_block_stop", { index }));
    index++;
  }
  for (const c of calls) {
    sse.push(event("content_block_start", {
      index,
      content_block: { type: "tool_use", id: c.id, name: c.name, input: {} },
    }));
    const args = JSON.stringify(c.args);
    const half = Math.floor(args.length / 2);
    sse.push(event("content_block_delta", {
      index,
      delta: { type: "input_json_delta", partial_json: "" },
    }));
    for (const part of [args.slice(0, half), PING, args.slice(half)]) {
      if (part === PING) sse.push(PING);
      else {
        sse.push(event("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: part },
        }));
      }
    }
    sse.push(event("content_block_stop", { index }));
    index++;
  }
  sse.push(event("message_delta", {
    delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: 7 },
  }));
  sse.push(event("message_stop", {}));
  return { sse };
}

/** A scripted reply in either format. */
export function reply(kind: "openai" | "anthropic", text: string, calls: ScriptCall[] = []): Reply {
  return kind === "openai" ? openaiReply(text, calls) : anthropicReply(text, calls);
}

/** The tool results a request carried back to the model, in order, in either format. */
export function toolResultsIn(
  kind: "openai" | "anthropic",
  request: Received,
): { id: string; content: string; is_error?: boolean }[] {
  const messages = (request.json.messages ?? []) as Record<string, unknown>[];
  if (kind === "openai") {
    return messages.filter((m) => m.role === "tool").map((m) => ({
      id: m.tool_call_id as string,
      content: m.content as string,
    }));
  }
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Record<string, unknown>[]).filter((b) => b.type === "tool_result").map((
        b,
      ) => ({
        id: b.tool_use_id as string,
        content: b.content as string,
        is_error: b.is_error as boolean | undefined,
      }))
      : []
  );
}
