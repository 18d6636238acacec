/**
 * Test helpers: temp folders that remove themselves, and running the real `magi` command
 * line as a child process with its own config, cache and state folders.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { RUN_FLAGS } from "../scripts/permissions.ts";

/** The repository's root folder. */
export const REPO = fileURLToPath(new URL("..", import.meta.url));
/** Fixture tools and files. */
export const TESTDATA = join(REPO, "tests", "testdata");

/** A temp folder removed when disposed (`await using dir = await tempDir()`). */
export interface TempDir extends AsyncDisposable {
  path: string;
}

/** Makes a temp folder that removes itself. */
export async function tempDir(prefix = "magi-test-"): Promise<TempDir> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** What a magi run printed and how it ended. */
export interface MagiRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** How to run magi. */
export interface MagiOptions {
  cwd?: string;
  /** Variables added to the environment. */
  env?: Record<string, string>;
  stdin?: string;
  /** A folder for XDG config, cache and state (isolates runs from the person's own). */
  home?: string;
}

/** Deno's cache folder as this process sees it (Linux default unless DENO_DIR is set). */
export const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("XDG_CACHE_HOME") || join(Deno.env.get("HOME") ?? "/root", ".cache"), "deno");

/**
 * The arguments of `deno` that run magi as `deno task magi` does: its permission set (never
 * `-A`), this checkout's deno.json and main.ts, then `args`.
 */
export function magiArgs(args: string[]): string[] {
  return [
    "run",
    ...RUN_FLAGS,
    "--quiet",
    "--config",
    join(REPO, "deno.json"),
    join(REPO, "main.ts"),
    ...args,
  ];
}

/**
 * Runs `deno run <magi's permission set> main.ts ARGS…` from the repo, as a person would run
 * magi (scripts/permissions.ts).
 * Unless `home` is given, config/cache/state go to a fresh temp folder.
 */
export async function magi(args: string[], opts: MagiOptions = {}): Promise<MagiRun> {
  const home = opts.home ?? await Deno.makeTempDir({ prefix: "magi-home-" });
  const env: Record<string, string> = {
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
    NO_COLOR: "1",
    // Deno's own cache stays where it is (it follows XDG_CACHE_HOME otherwise: a cold
    // cache, and npm metadata fetched again, for every run).
    DENO_DIR: DENO_DIR,
    ...opts.env,
  };
  const child = new Deno.Command("deno", {
    args: magiArgs(args),
    cwd: opts.cwd ?? REPO,
    env,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = await child.output();
  if (!opts.home) await Deno.remove(home, { recursive: true }).catch(() => {});
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * The real `magi` command line as a `Deno.Command` ({@link magiArgs}), for tests
 * that must watch or signal the process itself (memory, SIGTERM, SIGKILL); `magi()` suits
 * the rest. `env` is added to this process's environment (DENO_DIR kept).
 */
export function magiCommand(
  args: string[],
  opts: {
    cwd?: string;
    env?: Record<string, string>;
    stdout?: "piped" | "null";
    stderr?: "piped" | "null";
  } = {},
): Deno.Command {
  return new Deno.Command("deno", {
    args: magiArgs(args),
    cwd: opts.cwd ?? REPO,
    env: { DENO_DIR, ...opts.env },
    stdin: "null",
    stdout: opts.stdout ?? "null",
    stderr: opts.stderr ?? "null",
  });
}

/** Writes a config file and returns its path. */
export async function writeConfig(dir: string, config: unknown): Promise<string> {
  const path = join(dir, "config.jsonc");
  await Deno.writeTextFile(path, JSON.stringify(config, null, 2));
  return path;
}

/** Makes an executable tool `<dir>/<name>/<name>` with the given script text. */
export async function makeTool(
  dir: string,
  name: string,
  script: string,
  schema?: unknown,
): Promise<string> {
  const folder = join(dir, name);
  await Deno.mkdir(folder, { recursive: true });
  const bin = join(folder, name);
  await Deno.writeTextFile(bin, script, { mode: 0o755 });
  await Deno.chmod(bin, 0o755);
  if (schema !== undefined) {
    await Deno.writeTextFile(
      join(folder, "schema.json"),
      typeof schema === "string" ? schema : JSON.stringify(schema),
    );
  }
  return bin;
}

/** A runtime built in-process over fixture folders, with isolated XDG folders. */
export interface TestRuntime extends AsyncDisposable {
  rt: import("../lib/runtime/runtime.ts").Runtime;
  /** Lines the runtime warned. */
  warnings: string[];
  home: string;
}

/** Builds a runtime in-process (no subprocess magi), e.g. to call tools through `runTool`. */
export async function testRuntime(
  opts: { toolsDirs?: string[]; env?: Record<string, string>; config?: unknown; cwd?: string } = {},
): Promise<TestRuntime> {
  const { createRuntime } = await import("../lib/runtime/runtime.ts");
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-rt-" }));
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
    ...opts.env,
  };
  delete env.MAGI_CONFIG;
  const configFlag = opts.config === undefined ? undefined : await writeConfig(home, opts.config);
  const warnings: string[] = [];
  const rt = await createRuntime({
    cwd: opts.cwd ?? home,
    env,
    configFlag,
    toolsDirs: opts.toolsDirs,
    warn: (m) => void warnings.push(m),
  });
  return {
    rt,
    warnings,
    home,
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }).catch(() => {}),
  };
}

/**
 * A child's output read as it comes, so a test can wait for the line it acts after (a kill, a
 * signal, a file it creates) instead of sleeping. `until(re)` resolves with the text so far
 * once it matches, and rejects with the whole text if the stream ends first; `done` is the
 * whole text once the stream ends.
 */
export class StreamText {
  text = "";
  readonly done: Promise<string>;
  #ended = false;
  #waiters: { re: RegExp; resolve: (t: string) => void; reject: (e: Error) => void }[] = [];

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = this.#read(stream);
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<string> {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      this.text += chunk;
      this.#settle();
    }
    this.#ended = true;
    this.#settle();
    return this.text;
  }

  #settle(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (w.re.test(this.text)) w.resolve(this.text);
      else if (this.#ended) {
        w.reject(new Error(`the output ended without ${w.re}:\n${this.text}`));
      } else return true;
      return false;
    });
  }

  /** Waits until the text so far matches `re`. */
  until(re: RegExp): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ re, resolve, reject });
      this.#settle();
    });
  }
}
