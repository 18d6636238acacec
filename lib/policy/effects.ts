/**
 * What a call does (its `Effects`, see `door.ts`): the tool's own `effects(args, cwd)` when it
 * declares them, else what its kind of source implies — a tools folder's or a peer's program
 * is started, an MCP server's tool is opaque.
 *
 * @module
 */
import type { Tool } from "../core/types.ts";
import type { Effects } from "./door.ts";
import { readLine } from "./shell.ts";

/** No effects at all. */
export const NONE: Effects = { reads: [], writes: [], starts: [], network: false };

/** The effects of one call of `tool`. */
export function effectsOf(tool: Tool, args: Record<string, unknown>, cwd: string): Effects {
  const own = tool.effects?.(args, cwd);
  if (own) return own;
  const { source, where } = tool.origin;
  switch (source) {
    case "tools_dir":
    case "shipped":
      return { ...NONE, starts: [`${where}/${tool.declaration.name}`], reads: [cwd] };
    case "peer":
      return { ...NONE, starts: [where.split(" ").slice(1).join(" ")], reads: [cwd] };
    case "mcp":
      return { ...NONE, opaque: true, network: true };
    case "lua":
      // A body's programs (`magi.exec`) pass the door one by one when it starts them.
      return { ...NONE, execsAtRun: true };
    default:
      return NONE;
  }
}

/** The effects of a builtin's call: `run` starts its line's programs, the file tools paths. */
export function builtinEffects(name: string, args: Record<string, unknown>, cwd: string): Effects {
  const paths = [
    ...(typeof args.path === "string" ? [args.path] : []),
    ...(Array.isArray(args.paths) ? args.paths.filter((p) => typeof p === "string") : []),
  ] as string[];
  switch (name) {
    case "run": {
      const line = typeof args.command === "string" ? readLine(args.command) : undefined;
      const starts = line ? line.commands.map((c) => c.program).filter((p) => p !== "") : [];
      // A line of shell alone still starts bash.
      return { ...NONE, starts: ["bash", ...starts], reads: [cwd] };
    }
    case "write":
    case "edit":
      return { ...NONE, writes: paths };
    case "read":
    case "grep":
      return { ...NONE, reads: paths.length > 0 ? paths : [cwd] };
    default:
      return NONE;
  }
}
