/**
 * The symlink-swap race for the file builtins' tests and bench: a root holding folder `d`,
 * an outside folder with the same file names, and a real background process swapping `d`
 * between the real folder and a symlink to the outside one while calls of `read`, `write`,
 * `edit` and `grep` run through the pipeline.
 *
 * @module
 */
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { builtinRuntime } from "./helpers.ts";

/** The outside files' text: no result may contain it. */
export const OUTSIDE = "OUTSIDE-SECRET";

/** How one swap race went. */
export interface SwapRace {
  /**
   * Calls by builtin: succeeded on the inside file, refused with an error, escaped; and the
   * milliseconds the calls took, summed.
   */
  counts: Record<string, { ok: number; error: number; escaped: number; ms: number }>;
  /** Error lines seen, with how often. */
  errors: Map<string, number>;
  /** Results that contain outside content or say something unexpected. */
  escapes: string[];
  /** Outside files created, changed or removed (name → what happened). */
  outsideChanged: string[];
  /** How the swapper ended: killed (SIGKILL) unless it failed early. */
  swapperStatus?: Deno.CommandStatus;
  /** Swaps the background process made during the calls. */
  swaps: number;
}

/**
 * Bash: move the real folder away, put a symlink to the outside folder in its place, remove
 * it, move the folder back — forever, counting swaps. A folder the calls made at `d` while
 * it was missing is removed before the real one goes back.
 */
const BASH_SWAPPER = `cd "$1" || exit 1
n=0
while :; do
  rm -rf d; mv -T d.real d
  [ $n -eq 0 ] && echo started
  n=$((n+1))
  [ $((n % 10)) -eq 0 ] && echo "$n" > ../swaps
  mv -T d d.real; ln -s "$2" d; rm -f d
done`;

/**
 * Perl: exchange the real folder `d` and a symlink `d.link` to the outside folder atomically
 * (renameat2 RENAME_EXCHANGE, x86-64 Linux), as fast as system calls go: `d` is never missing.
 */
const PERL_SWAPPER =
  `chdir $ARGV[0] or die; rename("d.real", "d") or die; symlink($ARGV[1], "d.link") or die;
$| = 1; print "started\n"; my $n = 0; my ($d, $link) = ("d", "d.link");
while (1) {
  syscall(316, -100, $d, -100, $link, 2) == 0 or die "renameat2: $!"; $n++;
  if ($n % 10000 == 0) { open(my $f, ">", "../swaps"); print $f $n; close($f); }
}`;

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of Deno.readDirSync(dir)) {
    out.set(
      e.name,
      e.isFile ? Deno.readTextFileSync(join(dir, e.name)) : `(${e.isDirectory ? "dir" : "other"})`,
    );
  }
  return out;
}

/**
 * Runs `calls` calls of each builtin, `parallel` at a time, while a swapper runs.
 *
 * @param base an empty folder; `root` and `outside` are made in it, and only `root` is a root
 */
export async function swapRace(
  base: string,
  opts: { calls: number; parallel?: number; swapper?: "bash" | "perl" },
): Promise<SwapRace> {
  const root = join(base, "root");
  const outside = join(base, "outside");
  // The swapper moves d.real to d when it starts.
  await Deno.mkdir(join(root, "d.real"), { recursive: true });
  await Deno.mkdir(outside);
  const edits = Array.from({ length: opts.calls }, (_, i) => `e${i}.txt`);
  for (const name of ["secret.txt", "new.txt", ...edits]) {
    await Deno.writeTextFile(join(outside, name), `${OUTSIDE} ${name}\nA\n`);
  }
  await Deno.writeTextFile(join(root, "d.real", "secret.txt"), "INSIDE-TEXT\n");
  for (const name of edits) await Deno.writeTextFile(join(root, "d.real", name), "A\n");
  const before = snapshot(outside);
  await using t = await builtinRuntime(root, { roots: [root] });
  const program = opts.swapper === "perl" ? "perl" : "bash";
  const script = opts.swapper === "perl" ? PERL_SWAPPER : BASH_SWAPPER;
  const swapper = new Deno.Command(program, {
    args: program === "perl"
      ? ["-e", script, root, outside]
      : ["-c", script, "swap", root, outside],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const race: SwapRace = {
    counts: {},
    errors: new Map(),
    escapes: [],
    outsideChanged: [],
    swaps: 0,
  };
  try {
    // Wait for the first swap, not for a while.
    const reader = swapper.stdout.getReader();
    const first = await reader.read();
    reader.releaseLock();
    swapper.stdout.cancel().catch(() => {});
    if (first.done) throw new Error("the swapper did not start");
    const jobs: [string, Record<string, unknown>, RegExp][] = [];
    for (let i = 0; i < opts.calls; i++) {
      jobs.push(
        ["read", { path: "d/secret.txt" }, /^1\tINSIDE-TEXT\n$/],
        ["write", { path: "d/new.txt", content: `inside ${i}\n` }, /^wrote 1 line to d\/new.txt/],
        [
          "edit",
          { path: `d/e${i}.txt`, old_string: "A", new_string: "B" },
          /^patched d\/e\d+\.txt: \+1 \u22121\n$/,
        ],
        ["grep", { pattern: "SECRET|INSIDE", paths: ["d"] }, /^d\/secret\.txt:1:INSIDE-TEXT\n$/],
      );
    }
    const parallel = opts.parallel ?? 8;
    for (let at = 0; at < jobs.length; at += parallel) {
      await Promise.all(
        jobs.slice(at, at + parallel).map(async ([name, args, ok]) => {
          const started = performance.now();
          const r = await runTool(t.rt, { name, args, caller: "person" });
          const count = race.counts[name] ??= { ok: 0, error: 0, escaped: 0, ms: 0 };
          count.ms += performance.now() - started;
          const said = `${r.said}`;
          if (said.includes(OUTSIDE) || r.shown?.includes(OUTSIDE)) {
            count.escaped++;
            race.escapes.push(`${name}: ${said}`);
          } else if (!r.is_error && ok.test(said)) {
            count.ok++;
          } else {
            count.error++;
            const line = said.split("\n")[0].replace(/\d+/g, "N");
            race.errors.set(`${name}: ${line}`, (race.errors.get(`${name}: ${line}`) ?? 0) + 1);
          }
        }),
      );
    }
  } finally {
    try {
      swapper.kill("SIGKILL");
    } catch {
      // It ended already (the status below says how).
    }
    race.swapperStatus = await swapper.status;
  }
  try {
    race.swaps = Number(await Deno.readTextFile(join(base, "swaps")));
  } catch {
    race.swaps = 0;
  }
  const after = snapshot(outside);
  for (const [name, text] of after) {
    if (before.get(name) !== text) race.outsideChanged.push(`${name}: ${text.slice(0, 60)}`);
  }
  for (const name of before.keys()) {
    if (!after.has(name)) race.outsideChanged.push(`${name}: removed`);
  }
  return race;
}
