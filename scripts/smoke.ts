/**
 * The smoke test of a built `magi` executable (scripts/compile.ts): the file is copied to an
 * empty temporary folder and run from there with a PATH that has no `deno` and fresh XDG
 * folders, so nothing can come from this checkout, Deno's cache or an earlier run. It must:
 * print magi's version; list the builtins, the shipped tools and a configured tools_dir tool
 * and Lua tool; and call a Lua tool, a tools_dir tool with a schema.json, a shipped tool, and
 * the builtins that load packages on first use (grep: ignore and picomatch; write: diff;
 * run: the shell parser), with a JSONC config file (jsonc-parser).
 *
 * Usage: `deno run -A scripts/smoke.ts FILE` (exit 1 and one line per problem on failure).
 *
 * @module
 */
import { basename, join } from "node:path";
import { VERSION } from "../lib/core/version.ts";

const BUILTINS = ["read", "write", "edit", "grep", "run"];
const SHIPPED = ["wc-lines", "git-status", "todo"];

/** A folder of links to every program on PATH except `deno`. */
async function pathWithoutDeno(into: string): Promise<string> {
  await Deno.mkdir(into, { recursive: true });
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name === "deno" || e.name.startsWith("deno")) continue;
      try {
        await Deno.symlink(join(dir, e.name), join(into, e.name));
      } catch {
        // An earlier PATH entry already gave this name.
      }
    }
  }
  return into;
}

/**
 * Runs the smoke test on an executable.
 *
 * @returns the problems found, one line each (empty: it passed)
 */
export async function smokeTest(file: string): Promise<string[]> {
  const work = await Deno.makeTempDir({ prefix: "magi-smoke-" });
  const problems: string[] = [];
  try {
    const exe = join(work, "bin", basename(file));
    await Deno.mkdir(join(work, "bin"));
    await Deno.copyFile(file, exe);
    await Deno.chmod(exe, 0o755);
    const path = await pathWithoutDeno(join(work, "path"));
    const cwd = join(work, "project");
    const tools = join(work, "tools");
    const lua = join(work, "lua");
    for (const d of [cwd, join(tools, "greet"), lua]) await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(
      join(tools, "greet", "greet"),
      "#!/bin/sh\n" +
        `case "$1" in --help) printf 'greet: print a greeting\\nUsage: greet NAME\\n';;\n` +
        `*) echo "hello $1";; esac\n`,
      { mode: 0o755 },
    );
    await Deno.writeTextFile(
      join(tools, "greet", "schema.json"),
      JSON.stringify({
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
        "x-magi": { argv: [{ field: "name" }] },
      }),
    );
    await Deno.writeTextFile(
      join(lua, "shout.lua"),
      `magi.tool("shout", { description = "Upper-case a word", needs = { type = "object", ` +
        `properties = { word = { type = "string" } } }, ` +
        `run = function(args) return string.upper(args.word) end })\n`,
    );
    await Deno.writeTextFile(join(cwd, "notes.txt"), "alpha\nbeta\n");
    // A comment and a trailing comma: only a JSONC parser reads this.
    await Deno.writeTextFile(
      join(work, "config.jsonc"),
      `// smoke test\n{ "tools_dir": ["${tools}"], "lua_dirs": ["${lua}"], "roots": ["${cwd}"], }\n`,
    );
    const env = {
      PATH: path,
      HOME: join(work, "home"),
      XDG_CONFIG_HOME: join(work, "config"),
      XDG_CACHE_HOME: join(work, "cache"),
      XDG_STATE_HOME: join(work, "state"),
      MAGI_CONFIG: join(work, "config.jsonc"),
      NO_COLOR: "1",
    };
    const magi = async (...args: string[]) => {
      const out = await new Deno.Command(exe, {
        args,
        cwd,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
      const dec = new TextDecoder();
      return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    };
    const expect = async (what: string, args: string[], pattern: RegExp) => {
      try {
        const r = await magi(...args);
        if (r.code !== 0 || !pattern.test(r.stdout)) {
          problems.push(
            `${what}: exit ${r.code}, stdout ${JSON.stringify(r.stdout.slice(0, 200))}, ` +
              `stderr ${JSON.stringify(r.stderr.slice(-300))}`,
          );
        }
      } catch (error) {
        problems.push(`${what}: ${(error as Error).message}`);
      }
    };

    await expect("--version", ["--version"], new RegExp(`^magi ${VERSION.replaceAll(".", "\\.")}`));
    const listed = await magi("tools", "--json");
    let names: string[] = [];
    try {
      names = JSON.parse(listed.stdout).map((d: { name: string }) => d.name);
    } catch {
      problems.push(`tools --json: not JSON (exit ${listed.code}): ${listed.stderr.slice(-300)}`);
    }
    const missing = [...BUILTINS, ...SHIPPED, "greet", "shout"].filter((n) => !names.includes(n));
    if (names.length > 0 && missing.length > 0) {
      problems.push(`tools --json: missing ${missing.join(", ")}`);
    }
    await expect("call shout (Lua)", ["call", "shout", '{"word":"hi"}'], /HI/);
    await expect("call greet (tools_dir)", ["call", "greet", '{"name":"ann"}'], /hello ann/);
    await expect("call wc-lines (shipped)", ["call", "wc-lines", '{"path":"notes.txt"}'], /2/);
    await expect("call grep", ["call", "grep", '{"pattern":"beta","glob":"*.txt"}'], /beta/);
    await expect(
      "call write",
      ["call", "write", '{"path":"new.txt","content":"gamma\\n"}'],
      /new\.txt/,
    );
    await expect("call run", ["call", "run", '{"command":"echo smoke"}'], /smoke/);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
  return problems;
}

if (import.meta.main) {
  const [file] = Deno.args;
  if (!file) {
    console.error("usage: deno run -A scripts/smoke.ts FILE");
    Deno.exit(2);
  }
  const problems = await smokeTest(file);
  for (const p of problems) console.log(p);
  Deno.exit(problems.length > 0 ? 1 : 0);
}
