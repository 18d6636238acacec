/**
 * Deno's permission broker, served by magi (SPEC S5.2 `MAGI_PRIV`, S8.2): a tool written for
 * Deno that magi starts gets `DENO_PERMISSION_BROKER_PATH` pointing here, and Deno asks this
 * socket about every permission check instead of reading its flags. Newline-delimited JSON:
 * Deno writes `{"v":1,"pid":…,"id":N,"datetime":"…","permission":"read","value":"…"}`, magi
 * answers `{"id":N,"result":"allow"|"deny","reason":"…"}`; the reason becomes the
 * `NotCapable` message the tool sees.
 *
 * The answers follow the policy: `read` inside the roots (the tool's folder and its Deno
 * caches too), `write` inside the roots, `run` only the programs the policy allows (found as
 * `decide` trusts them), `env` yes, `net` only magi's own sockets, `sys`, `ffi` and `import`
 * no. A relative path to read or write is resolved against the asking process's working
 * directory (and its `/proc/self`, not magi's); a program must be named by its absolute path.
 *
 * @module
 */
import { isAbsolute, posix } from "node:path";
import type { Policy } from "./decide.ts";
import { door } from "./door.ts";
import { NONE } from "./effects.ts";
import { judge, sessionSettings } from "./facts.ts";
import { shellWord } from "./shell.ts";
import { isInside, physicalPath, realPathLenient } from "./roots.ts";
import { answerJsonLines, serveUnixSocket } from "../exec/unix_socket.ts";

/** One request from Deno. */
export interface BrokerRequest {
  v: number;
  pid: number;
  id: number;
  permission: string;
  value?: string | null;
}

/** The answer to it. */
export interface BrokerAnswer {
  id: number;
  result: "allow" | "deny";
  reason?: string;
}

/** What the broker needs besides the policy. */
export interface BrokerOptions {
  /** Folders a Deno tool may always read (its own folder, Deno's caches). */
  readable: string[];
  /** Unix sockets it may connect to (magi's approvals socket). */
  sockets: string[];
  /** The folder a relative path resolves against when the process's is unknown. */
  cwd: string;
  /**
   * The tools run in the sandbox's own PID namespace: a request's pid names a process there,
   * not here, so `/proc/PID` is not the asker's and relative paths resolve against `cwd`.
   */
  namespaced?: boolean;
}

const brokers = new WeakMap<Policy, { path: string; options: BrokerOptions }>();

/**
 * A path as the asking process would open it: relative to its working directory, and its own
 * `/proc/self`, `/dev/fd` and `/dev/stdin` rather than magi's (which `realpath` in magi would
 * give).
 */
function asProcess(path: string, pid: number, fallback: string): string {
  // Not normalised: `link/..` is the parent of the link's target, as the kernel opens it.
  const p = isAbsolute(path) ? path : `${processCwd(pid, fallback)}/${path}`;
  const own = `/proc/${pid}`;
  return p.replace(/^\/+proc\/+(self|thread-self)(?=\/|$)/, own)
    .replace(/^\/+dev\/+fd(?=\/|$)/, `${own}/fd`)
    .replace(/^\/dev\/std(in|out|err)$/, (_, s) => `${own}/fd/${["in", "out", "err"].indexOf(s)}`);
}

function processCwd(pid: number, fallback: string): string {
  if (pid <= 0) return fallback;
  try {
    return Deno.realPathSync(`/proc/${pid}/cwd`);
  } catch {
    return fallback;
  }
}

/** Decides one request by the policy. */
export function brokerAnswer(
  policy: Policy,
  options: BrokerOptions,
  request: BrokerRequest,
): BrokerAnswer {
  const { id, permission } = request;
  const value = request.value ?? "";
  const deny = (reason: string): BrokerAnswer => ({ id, result: "deny", reason });
  const allow: BrokerAnswer = { id, result: "allow" };
  const inRoots = (path: string, extra: string[]) => {
    // As the kernel resolves it: `link/..` is the parent of the link's target.
    const real = physicalPath(
      "/",
      asProcess(path, options.namespaced ? 0 : request.pid, options.cwd),
    );
    return [...policy.roots, ...extra].some((r) => isInside(real, realPathLenient(r)));
  };
  // Connecting to a unix socket asks for reading and writing its path: magi's own sockets lie
  // in its private folder, outside the roots (the shared temp folder is no root).
  const ownSocket = (path: string) => value !== "" && options.sockets.includes(path);
  switch (permission) {
    case "read":
      if (value === "" || ownSocket(value) || inRoots(value, options.readable)) return allow;
      return deny(`magi's policy: reading "${value}" is outside the allowed roots`);
    case "write":
      if (ownSocket(value) || (value !== "" && inRoots(value, []))) return allow;
      return deny(`magi's policy: writing "${value || "anywhere"}" is outside the allowed roots`);
    case "run": {
      // Deno asks with the name as the tool wrote it, then looks a bare name up on whatever
      // PATH the tool gives the command: the name alone cannot say which program runs.
      // A relative path is opened from the folder the command is given (its `cwd`), which the
      // request does not say; `/proc/self/cwd/…` and `/dev/fd/…` are the child's own too.
      if (
        value !== "" && (!isAbsolute(value) || /^\/(proc|dev)(\/|$)/.test(posix.normalize(value)))
      ) {
        return deny(
          `magi's policy: start "${value}" by its absolute path (a bare name is looked up on a ` +
            "PATH the tool chooses, a relative path from the folder it chooses)",
        );
      }
      const real = physicalPath("/", value);
      if (value !== "" && programPasses(policy, real)) return allow;
      return deny(`magi's policy: "${value || "any program"}" is not an allowed program`);
    }
    case "env":
      return allow;
    case "net":
      if (value.startsWith("unix:") && options.sockets.includes(value.slice(5))) return allow;
      return deny(`magi's policy: no network for tools ("${value || "any host"}")`);
    default:
      return deny(`magi's policy: no "${permission}" permission for tools`);
  }
}

/**
 * Whether a program a Deno tool starts passes the door, as a model's `run` of the program
 * alone: allowed, or asked about while `--auto` approves asks. The broker cannot ask anyone.
 */
function programPasses(policy: Policy, program: string): boolean {
  const verdict = judge(policy, {
    tool: "run",
    source: "builtin",
    args: { command: shellWord(program) },
    cwd: policy.roots[0] ?? "/",
    argv: [program],
  });
  const settings = sessionSettings(policy);
  const ruling = door({
    tool: "run",
    verdict,
    // The tool's own sandbox holds what it starts: no sandbox of its own to ask for.
    effects: NONE,
    caller: "model",
    settings,
  });
  return ruling.decision === "allow" ||
    (ruling.decision === "ask" && settings.approval === "never");
}

/**
 * Starts the broker of a runtime (once per policy) and returns its socket's path. The
 * listener does not keep magi alive; the socket's folder is removed when magi exits.
 */
export function serveBroker(policy: Policy, options: BrokerOptions): string {
  const found = brokers.get(policy);
  if (found) return found.path;
  const path = serveUnixSocket("magi-priv-", "broker.sock", (conn) => serve(policy, options, conn));
  brokers.set(policy, { path, options });
  return path;
}

/** The broker socket of a runtime, if it was started. */
export function brokerPath(policy: Policy): string | undefined {
  return brokers.get(policy)?.path;
}

function serve(policy: Policy, options: BrokerOptions, conn: Deno.Conn): Promise<void> {
  return answerJsonLines(conn, (line) => {
    try {
      return brokerAnswer(policy, options, JSON.parse(line));
    } catch {
      return undefined; // not a request Deno sends
    }
  });
}

/** Whether an executable is written for Deno: its first line runs `deno`. */
export function isDenoScript(path: string): boolean {
  try {
    const file = Deno.openSync(path);
    try {
      const buf = new Uint8Array(256);
      const n = file.readSync(buf) ?? 0;
      const first = new TextDecoder().decode(buf.subarray(0, n)).split("\n")[0];
      return /^#!.*\bdeno\b/.test(first);
    } finally {
      file.close();
    }
  } catch {
    return false;
  }
}
