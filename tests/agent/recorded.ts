/**
 * Replaying recorded provider streams (tests/testdata/streams/, see its README for each
 * file's source): the SSE body is split into its frames and served as it was recorded.
 * The stored Anthropic files lack the blank line after their last event, which the SSE
 * rules need to dispatch it: one is added (FIELD_NOTES, "Checked 2026-12-01").
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { Reply } from "./fake_provider.ts";

const DIR = fileURLToPath(new URL("../testdata/streams/", import.meta.url));

/** The frames of a recorded stream, each ending with its blank line. */
export function recordedFrames(file: string): string[] {
  let text = Deno.readTextFileSync(DIR + file).replace(/\r\n/g, "\n");
  if (!text.endsWith("\n\n")) text += text.endsWith("\n") ? "\n" : "\n\n";
  return text.split(/\n\n/).filter((f) => f.trim() !== "").map((f) => f + "\n\n");
}

/** A scripted reply replaying a recorded stream. */
export function recorded(file: string): Reply {
  return { sse: recordedFrames(file) };
}

/** The recordings the tests replay, by what they hold. */
export const STREAMS = {
  /** openai/openai-python `.inline-snapshot/external/173417d5….bin`: a streamed refusal. */
  openaiRefusal:
    "openai-python_173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin",
  /** openai/openai-python `.inline-snapshot/external/4cc50a61….bin`: `finish_reason: "length"`. */
  openaiLength:
    "openai-python_4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin",
  /** openai/openai-python `.inline-snapshot/external/2018feb6….bin`: one tool call, usage. */
  openaiToolCall:
    "openai-python_2018feb66ae13fcf5333d61b95849decc68d3f63bd38172889367e1afb1e04f7.bin",
  /** openai/openai-python `.inline-snapshot/external/83b060ba….bin`: a short text answer. */
  openaiText: "openai-python_83b060bae42eb41c4f1edbb7c1542b954b37d9dfd1910b964ddebc9677e6ae85.bin",
  /** anthropics/anthropic-sdk-typescript `tests/fixtures/fable-fallback/stream-a-refusal.sse`. */
  anthropicThinkingRefusal:
    "anthropic-sdk-typescript_tests_fixtures_fable-fallback_stream-a-refusal.sse",
  /** anthropics/anthropic-sdk-typescript `tests/lib/fixtures/tool_use_response.txt`. */
  anthropicToolUse: "anthropic-sdk-typescript_tests_lib_fixtures_tool_use_response.txt",
  /** anthropics/anthropic-sdk-typescript `tests/lib/fixtures/basic_response.txt`. */
  anthropicText: "anthropic-sdk-typescript_tests_lib_fixtures_basic_response.txt",
} as const;
