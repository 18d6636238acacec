/**
 * After a call that could write the roots: the repositories it planted or changed there are
 * disarmed (`planted_repos.ts`), and the person and the model are told, one line each thing.
 *
 * @module
 */
import type { Outcome, Tool } from "../core/types.ts";
import type { Policy } from "./decide.ts";
import type { Wrap } from "../confinement/sandbox.ts";
import { type Before, disarmPlanted, lookBefore } from "../confinement/planted_repos.ts";
import { systemTempDir } from "../core/temp.ts";
import { homeDotEntry, within } from "../confinement/sandbox_paths.ts";

/** The launchers of workspace-write calls (`facts.ts` marks them). */
const writing = new WeakSet<Wrap>();

/** Marks a launcher as one whose programs may write the roots. */
export function markWriting(wrap: Wrap): Wrap {
  writing.add(wrap);
  return wrap;
}

/** Whether a call may have written the roots: a workspace-write sandbox, or `write`/`edit`. */
export function mayWriteRoots(tool: Tool, wrap: Wrap | undefined): boolean {
  if (wrap && writing.has(wrap)) return true;
  const name = tool.declaration.name;
  return tool.origin.source === "builtin" && (name === "write" || name === "edit");
}

/** A call's watch over the roots' repositories: what they were, then what it changed. */
export interface WritesWatch {
  /** Disarms what the call planted; the outcome with one line per thing disarmed. */
  end(outcome: Outcome, tell?: (line: string) => void): Outcome;
}

const idle: WritesWatch = { end: (outcome) => outcome };

/**
 * Starts watching the roots' repositories (not the system temp folder itself, shared and busy)
 * for a call that may write them ({@link mayWriteRoots}); a watch that does nothing otherwise.
 */
export function watchWrites(policy: Policy, tool: Tool, wrap: Wrap | undefined): WritesWatch {
  if (!mayWriteRoots(tool, wrap)) return idle;
  let temp = systemTempDir();
  try {
    temp = Deno.realPathSync(temp);
  } catch {
    // as it is
  }
  const roots = policy.roots.filter((r) => r !== temp && r !== "/");
  // HOME's hidden entries are read-only for a call when a root holds HOME (`homeCover`): not
  // looked into, but for a root inside one.
  let home = policy.env.HOME ?? "";
  try {
    home = home && Deno.realPathSync(home);
  } catch {
    home = "";
  }
  const skip = (dir: string) =>
    home !== "" && homeDotEntry(dir, home) === dir && !roots.some((r) => within(r, dir));
  const since = Date.now();
  let before: Before;
  try {
    before = lookBefore(roots, skip);
  } catch {
    before = { tops: new Map(), items: new Map() };
  }
  return {
    end(outcome, tell) {
      let look;
      try {
        look = disarmPlanted(roots, since, before, skip);
      } catch (error) {
        tell?.(
          `magi: could not look for repositories the call planted: ${(error as Error).message}`,
        );
        return outcome;
      }
      const lines = look.disarmed.map((d) =>
        `[magi: disarmed ${d.why} the call left: ${d.path} moved to ${d.movedTo}]`
      );
      if (look.cut) {
        lines.push(
          `[magi: looked at the first ${look.folders - 1} folders of the roots for planted ` +
            `repositories; the rest were not looked at]`,
        );
      }
      if (lines.length === 0) return outcome;
      for (const l of lines) tell?.(l);
      return { ...outcome, note: [outcome.note, ...lines].filter(Boolean).join("\n") };
    },
  };
}
