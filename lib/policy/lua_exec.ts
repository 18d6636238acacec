/**
 * The policy over Lua bodies (SPEC S8.1, S8.2): which programs a Lua Worker may start (its
 * Deno `run` permission), and the judgement of each `magi.exec` as a `run` of the same
 * command line would be judged — rules, the roots, asking the person.
 *
 * @module
 */
import type { ExecJob } from "../exec/lua/host_api.ts";
import type { ExecVerdict, LuaConfinement } from "../exec/lua/worker_host.ts";
import type { Invocation } from "../core/types.ts";
import { allowedPrograms, launchPath, type Policy, resolveProgram } from "./decide.ts";
import { systemLookups } from "./fs_facts.ts";
import { gateCommand, gateForProject } from "./gate.ts";
import { shellWord } from "./shell.ts";

export { shellWord } from "./shell.ts";

/**
 * The confinement of a runtime's Lua bodies under its policy.
 *
 * @param policy called when a Worker starts or an exec is judged (the policy is built after
 *   the declarations are read)
 * @param opts.project for a project's own `.magi/tools` (see `gateCommand`)
 */
export function luaConfinement(
  policy: () => Policy,
  opts: { project?: boolean } = {},
): LuaConfinement {
  return {
    programs: () => allowedPrograms(policy()),
    judge: (job, call, tool) => judgeExec(policy(), job, call, tool, opts),
    forProject: () => luaConfinement(policy, { project: true }),
    project: opts.project,
    gateTool: opts.project ? (tool, call) => gateForProject(policy(), tool, call) : undefined,
  };
}

async function judgeExec(
  policy: Policy,
  job: ExecJob,
  call: Invocation | undefined,
  tool: string | undefined,
  opts: { project?: boolean },
): Promise<ExecVerdict> {
  const name = JSON.stringify(job.program);
  const argv = [job.program, ...job.args];
  const line = argv.map(shellWord).join(" ");
  const gated = await gateCommand(policy, call, argv, line, job.cwd, tool, opts);
  if ("refused" in gated) return { refused: `${name}: ${gated.refused}` };
  const path = call?.env.PATH ?? policy.env.PATH ?? "";
  const look = systemLookups(policy);
  const program = resolveProgram(look, job.program, job.cwd, path);
  if (!program) return { refused: `Cannot start ${name}: no such program` };
  return {
    program: launchPath(look, job.program, program),
    byPerson: gated.allowed === "by-person",
    wrap: gated.wrap,
  };
}
