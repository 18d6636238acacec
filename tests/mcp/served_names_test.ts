/**
 * The names `magi mcp` serves with config `mcp.plain_names`: an upstream tool or prompt under
 * its own name when nothing else served has it; a collision keeps `NAME__`; the prefixed name
 * is always accepted.
 */
import assert from "node:assert/strict";
import { Registry } from "../../lib/registry/registry.ts";
import type { Tool } from "../../lib/core/types.ts";
import {
  registryToolName,
  servedPromptNames,
  servedToolNames,
} from "../../lib/mcp/served_names.ts";

function tool(name: string, source: string, where: string): Tool {
  return {
    declaration: { name, description: name, parameters: { type: "object" } },
    origin: { source, where },
    invoke: () => Promise.resolve({ isError: false }),
  } as Tool;
}

const registry = new Registry([
  tool("read", "builtin", "builtin"),
  tool("a__echo", "mcp", "mcp:a/echo"),
  tool("b__echo", "mcp", "mcp:b/echo"),
  tool("a__sum", "mcp", "mcp:a/sum"),
  tool("a__read", "mcp", "mcp:a/read"),
  tool("list_mcp_resources", "mcp", "mcp:*/resources"),
], () => {});

Deno.test("plain names: unique upstream tools by their own name, collisions prefixed", () => {
  const served = servedToolNames(registry, true);
  assert.equal(served.get("a__sum"), "sum");
  assert.equal(served.get("a__echo"), "a__echo", "two servers list echo");
  assert.equal(served.get("b__echo"), "b__echo");
  assert.equal(served.get("a__read"), "a__read", "the builtin read keeps its name");
  assert.equal(served.get("read"), "read");
  assert.equal(served.get("list_mcp_resources"), "list_mcp_resources");
  assert.equal(registryToolName(registry, true, "sum"), "a__sum");
  assert.equal(registryToolName(registry, true, "a__sum"), "a__sum");
  assert.equal(registryToolName(registry, true, "echo"), undefined);
  assert.equal(registryToolName(registry, false, "sum"), undefined, "off by default");
  assert.equal(servedToolNames(registry, false).get("a__sum"), "a__sum");
});

Deno.test("plain names: prompts likewise", () => {
  const prompts = [
    { prompt: "greet", prefixed: "a__greet" },
    { prompt: "greet", prefixed: "b__greet" },
    { prompt: "review", prefixed: "a__review" },
  ];
  assert.deepEqual(servedPromptNames(prompts, true), ["a__greet", "b__greet", "review"]);
  assert.deepEqual(servedPromptNames(prompts, false), ["a__greet", "b__greet", "a__review"]);
});
