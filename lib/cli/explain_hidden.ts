/**
 * What the file builtins refuse whatever the rules say: a path the sandbox hides (a credential
 * store, `sandbox.deny_read`, magi's own files). `magi policy explain` says so, as the door's
 * decision, rather than the rules' `allow` the builtin's body then refuses.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { Policy } from "../policy/decide.ts";
import { hiddenFor } from "../policy/facts.ts";
import { hiddenWhy } from "../confinement/sandbox_paths.ts";

/** The builtins whose bodies refuse hidden paths. */
const FILE_BUILTINS = new Set(["read", "write", "edit", "grep"]);

/**
 * Why a file builtin's call is refused as hidden, as `hidden: a credential store ("PATH")`, or
 * undefined when none of its paths is hidden (or it is no file builtin).
 *
 * @param args the call's arguments (`path`, `paths`)
 */
export function hiddenReason(
  policy: Policy,
  tool: string,
  source: string,
  args: Record<string, unknown>,
  cwd: string,
): string | undefined {
  if (source !== "builtin" || !FILE_BUILTINS.has(tool)) return undefined;
  const paths = [
    ...(typeof args.path === "string" ? [args.path] : []),
    ...(Array.isArray(args.paths) ? args.paths.filter((p) => typeof p === "string") : []),
  ] as string[];
  const set = hiddenFor(policy);
  const home = policy.env.HOME ?? "";
  for (const p of paths) {
    const abs = p.startsWith("~/") && home ? join(home, p.slice(2)) : resolve(cwd, p);
    const why = hiddenWhy(realOf(abs), set);
    if (why) return `hidden: ${why} ("${p}")`;
  }
  return undefined;
}

/** A path with its symlinks resolved; a missing one as its nearest existing folder's. */
function realOf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    const parent = dirname(path);
    if (parent === path || !isAbsolute(path)) return path;
    return join(realOf(parent), basename(path));
  }
}
