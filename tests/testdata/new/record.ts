/**
 * Records the help texts and manual pages of installed programs for magi new's hermetic tests:
 * `deno run -A tests/testdata/new/record.ts [NAME…]`. Each program gets a folder
 * `recorded/NAME/` with `meta.json` (the command line, the version, the date, and which text
 * each help invocation printed) and the texts themselves. `tests/new/recorded.ts` replays them
 * through stand-in programs, so the tests do not depend on what a machine has installed.
 */
import { join } from "node:path";
import { RECORDED, type RecordedMeta, type RecordedRun } from "../../new/recorded_set.ts";

const HERE = new URL(".", import.meta.url).pathname;
const ENV = {
  ...Deno.env.toObject(),
  PAGER: "cat",
  MANPAGER: "cat",
  GIT_PAGER: "cat",
  NO_COLOR: "1",
  TERM: "dumb",
  COLUMNS: "100",
  MANWIDTH: "80",
  LC_ALL: "C.UTF-8",
};

async function run(program: string, args: string[]) {
  try {
    const out = await new Deno.Command(program, { args, env: ENV, stdin: "null" }).output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  } catch {
    return undefined;
  }
}

/** The invocations a help reader may make, after the subcommand words. */
const HELP_ARGS = [["--help"], ["-h"], ["--help", "all"], ["--help", "full"], ["--version"], [
  "-W",
  "usage",
]];

if (import.meta.main) {
  const names = Deno.args.filter((a) => !a.startsWith("--"));
  for (const name of names.length ? names : Object.keys(RECORDED)) {
    const entry = RECORDED[name];
    const words = entry.from.split(" ");
    const dir = join(HERE, "recorded", name);
    await Deno.mkdir(dir, { recursive: true });
    const runs: RecordedRun[] = [];
    const tries = [...HELP_ARGS.map((a) => [...words.slice(1), ...a])];
    if (words.length > 1) tries.push(["help", ...words.slice(1)]);
    let version = "";
    const texts = new Map<string, string>();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true });
    if (words.length > 1) {
      const own = await run(words[0], ["--version"]);
      if (own?.code === 0) version = own.stdout.split("\n")[0].trim();
    }
    for (const args of tries) {
      const got = await run(words[0], args);
      if (!got) break;
      const text = got.stdout.trim() !== "" ? got.stdout : got.stderr;
      if (text.trim() === "") continue;
      // The same text printed again (`--help all` where there is no more) is stored once.
      const same = runs.find((r) => texts.get(r.file) === text);
      const file = same?.file ?? args.join("_").replace(/^-+/, "").replace(/[^\w]+/g, "-") + ".txt";
      if (!same) await Deno.writeTextFile(join(dir, file), text);
      texts.set(file, text);
      runs.push({
        args,
        file,
        code: got.code,
        stream: got.stdout.trim() !== "" ? "stdout" : "stderr",
      });
      if (args.at(-1) === "--version" && got.code === 0 && version === "") version = text.split("\n")[0].trim();
    }
    const page = words.length > 1 ? words.join("-") : words[0];
    const man = await run("man", ["--nh", "--nj", "-P", "cat", page]);
    const meta: RecordedMeta = {
      from: entry.from,
      version: entry.version ?? version,
      recorded: new Date().toISOString().slice(0, 10),
      runs,
    };
    if (man && man.code === 0 && man.stdout.trim() !== "") {
      await Deno.writeTextFile(join(dir, "man.txt"), man.stdout);
      meta.man = { page, file: "man.txt" };
    }
    await Deno.writeTextFile(join(dir, "meta.json"), JSON.stringify(meta, null, 2) + "\n");
    console.error(`${name}: ${runs.map((r) => r.args.join(" ")).join("; ")}${meta.man ? "; man" : ""}`);
  }
}
