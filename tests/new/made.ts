/**
 * Making tools with `magi new` for tests: the call with the defaults the command line gives,
 * and a tool made in a temp folder of its own with a runtime that sees it.
 *
 * @module
 */
import { join } from "node:path";
import { makeTool, type NewResult } from "../../lib/cli/new.ts";
import { tempDir, type TestRuntime, testRuntime } from "../helpers.ts";
import { writeStandIns } from "./recorded.ts";

/** `magi new NAME --from WORDS…` into `toolsDir`: typed (not generic), no --force, no --dry-run. */
export function newTool(opts: {
  name: string;
  words: string[];
  toolsDir: string;
  cwd: string;
  env: Record<string, string>;
}): Promise<NewResult> {
  return makeTool({ ...opts, generic: false, force: false, dryRun: false });
}

/** A tool made in a temp folder of its own, and a runtime over its tools folder. */
export interface MadeTool extends AsyncDisposable {
  result: NewResult;
  /** The folder the tool was made in and calls run in (`<temp>/work`). */
  work: string;
  /** `<temp>/tools`, holding the tool. */
  toolsDir: string;
  runtime: TestRuntime;
}

/**
 * Makes tool `name` from `words` in a fresh temp folder: `work/` (filled by `setup`), the
 * stand-ins of the recorded programs `standIns` first on PATH (`bin/`, see `recorded.ts`), the
 * tool in `tools/`; then a runtime over that folder, where the person's own rule lets a model's
 * call of the tool write (workspace-write). Disposing removes the runtime and the folder.
 */
export async function madeInTemp(
  name: string,
  words: string[],
  opts: {
    prefix: string;
    standIns: string[];
    passThrough?: boolean;
    setup?: (work: string) => Promise<void>;
  },
): Promise<MadeTool> {
  const dir = await tempDir(opts.prefix);
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await opts.setup?.(work);
  const bin = await writeStandIns(join(dir.path, "bin"), opts.standIns, {
    passThrough: opts.passThrough,
  });
  const env = {
    ...Deno.env.toObject(),
    PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  const toolsDir = join(dir.path, "tools");
  const result = await newTool({ name, words, toolsDir, cwd: work, env });
  const runtime = await testRuntime({
    toolsDirs: [toolsDir],
    config: {
      shipped_tools: false,
      policy: { rules: [{ tool: "*", source: "tools_dir", decision: "allow" }] },
    },
    cwd: work,
  });
  return {
    result,
    work,
    toolsDir,
    runtime,
    [Symbol.asyncDispose]: async () => {
      await runtime[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}
