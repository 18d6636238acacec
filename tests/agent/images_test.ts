/**
 * Images from tool results reach the providers that take them: as files referenced by the
 * tool result (never base64 in said), within limits.image_bytes, sent as Anthropic `image`
 * blocks inside the tool_result and as an OpenAI user message of `image_url` parts after the
 * turn's tool messages.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { anthropicMessages } from "../../lib/agent/anthropic.ts";
import { imageRefs } from "../../lib/agent/images.ts";
import { openaiMessages } from "../../lib/agent/openai.ts";
import type { Message } from "../../lib/agent/provider.ts";
import type { ToolResult } from "../../lib/pipeline/run_tool.ts";
import { tempDir } from "../helpers.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);

async function resultWithImage(dir: string): Promise<ToolResult> {
  const path = join(dir, "a.png");
  await Deno.writeFile(path, PNG);
  return {
    name: "fs__read_media_file",
    said: `[image image/png, 8 bytes, saved to ${path}]\n`,
    shown: "",
    is_error: false,
    spill: null,
    attachments: [
      { block: { type: "image", data: "", mimeType: "image/png" }, mimeType: "image/png", path },
      { block: { type: "image", data: "", mimeType: "image/bmp" }, mimeType: "image/bmp", path },
    ],
  };
}

Deno.test("imageRefs keeps images of a type providers take, within the byte cap", async () => {
  await using dir = await tempDir();
  const result = await resultWithImage(dir.path);
  assert.deepEqual(imageRefs(result, 1024), [{
    mime_type: "image/png",
    path: join(dir.path, "a.png"),
  }]);
  assert.deepEqual(imageRefs(result, 4), [], "over the cap");
  assert.deepEqual(imageRefs(result, 0), [], "0 sends none");
});

Deno.test("tool results' images become Anthropic image blocks and OpenAI image_url parts", async () => {
  await using dir = await tempDir();
  const images = imageRefs(await resultWithImage(dir.path), 1024);
  const messages: Message[] = [
    { role: "user", text: "look" },
    {
      role: "assistant",
      text: "",
      tool_calls: [
        { id: "c1", name: "fs__read_media_file", arguments: "{}" },
        { id: "c2", name: "read", arguments: "{}" },
      ],
    },
    {
      role: "tool",
      result: { id: "c1", name: "fs__read_media_file", said: "[image]", is_error: false, images },
    },
    { role: "tool", result: { id: "c2", name: "read", said: "text", is_error: false } },
    { role: "assistant", text: "a dot", tool_calls: [] },
  ];
  const base64 = btoa(String.fromCharCode(...PNG));

  const anthropic = anthropicMessages(messages, (n) => n);
  const results = anthropic[2].content as { type: string; content: unknown }[];
  assert.deepEqual(results[0].content, [
    { type: "text", text: "[image]" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: base64 } },
  ]);
  assert.equal(results[1].content, "text");

  const openai = openaiMessages("", messages, (n) => n);
  assert.deepEqual(openai.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "tool",
    "user",
    "assistant",
  ]);
  assert.equal(openai[2].content, "[image]", "said alone in the tool message");
  assert.deepEqual(openai[4].content, [
    { type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } },
  ]);
});
