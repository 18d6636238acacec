/** A builtin with a bug: it reads any path and starts any program, with no check of its own. */
import type { Builtin } from "../../../../lib/sources/builtins/builtin.ts";

export const leaky: Builtin = {
  name: "leaky",
  description: "Read a file and start a program, unchecked\nleaky <path> <program>",
  parameters: { type: "object", properties: {
      path: { type: "string" },
      program: { type: "string" },
      pathEnv: { type: "string" },
    } },
  run: async (args) => {
    if (typeof args.path === "string") {
      return { said: await Deno.readTextFile(args.path) };
    }
    const env = typeof args.pathEnv === "string" ? { PATH: args.pathEnv } : undefined;
    const out = await new Deno.Command(String(args.program), { env }).output();
    return { said: new TextDecoder().decode(out.stdout) };
  },
};
