/**
 * Helpers for the builtins' tests: an in-process runtime over a temp folder, one call through
 * the pipeline, and a tools_dir tool for `run` lines to reach.
 *
 * @module
 */
import { runTool, type ToolResult } from "../../lib/runtime/run_tool.ts";
import type { Runtime } from "../../lib/runtime/runtime.ts";
import { join } from "node:path";
import { makeTool, type TestRuntime, testRuntime } from "../helpers.ts";

/** A runtime whose session starts in `cwd` (no shipped tools, so nothing is spawned). */
export function builtinRuntime(
  cwd: string,
  config: Record<string, unknown> = {},
  opts: { env?: Record<string, string>; toolsDirs?: string[] } = {},
): Promise<TestRuntime> {
  return testRuntime({ cwd, config: { shipped_tools: false, ...config }, ...opts });
}

/** One call through the pipeline. */
export function call(
  rt: Runtime,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  // The builtins' own behaviour, as a person's call: the policy's `ask` does not stop it.
  return runTool(rt, { name, args, caller: "person" });
}

/** Makes `<dir>/tools/hello-tool`, which prints `hello NAME`; returns the tools folder. */
export async function helloTool(dir: string): Promise<string> {
  const tools = join(dir, "tools");
  await makeTool(
    tools,
    "hello-tool",
    '#!/bin/sh\n# hello-tool — greets.\n# hello-tool <name>\necho "hello $1"\n',
  );
  return tools;
}
