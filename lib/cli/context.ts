/**
 * `magi context [--json]`: what the model will be given before the first message — the
 * system prompt (context files and skills catalogue included) and the tool declarations —
 * and the size of each in bytes. With `--json`: `{system, system_bytes, files: [{path, bytes,
 * kept}], tools, tools_bytes}`.
 *
 * @module
 */
import { promptFor } from "../agent/prompt.ts";
import { maxDepth } from "../agent/subagents/host.ts";
import { agentDeclaration } from "../agent/subagents/tool.ts";
import { listProfiles } from "../agent/subagents/profiles.ts";
import { CONTEXT_OPTIONS } from "./options.ts";
import { parseOptionsOnly, runtimeFor, write, writeJson } from "./common.ts";

/** Runs `magi context`. */
export async function contextCommand(args: string[]): Promise<number> {
  const values = parseOptionsOnly("context", args, CONTEXT_OPTIONS);
  const rt = await runtimeFor(values);
  const prompt = promptFor(rt, new Date());
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  // `magi run` and `magi chat` add `agent` when sub-agents are allowed (lib/agent/subagents/host.ts).
  const tools = rt.registry.declarations();
  if (maxDepth(rt) > 0 && !rt.registry.get("agent")) {
    tools.push(agentDeclaration(listProfiles(rt.session.cwd, rt.env, rt.warn)));
    tools.sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  const toolsJson = JSON.stringify(tools);
  if (values.json) {
    await writeJson({
      system: prompt.text,
      system_bytes: bytes(prompt.text),
      files: prompt.files,
      tools: tools.map((t) => t.name),
      tools_bytes: bytes(toolsJson),
    }, 2);
    return 0;
  }
  const files = prompt.files.map((f) =>
    `  ${f.path} (${f.bytes} bytes${f.kept < f.bytes ? `, ${f.kept} kept` : ""})`
  );
  await write(
    prompt.text +
      "\n---\n" +
      `system prompt: ${bytes(prompt.text)} bytes\n` +
      (files.length ? `context files:\n${files.join("\n")}\n` : "context files: none\n") +
      `tool declarations: ${tools.length}, ${bytes(toolsJson)} bytes as JSON\n`,
  );
  return 0;
}
