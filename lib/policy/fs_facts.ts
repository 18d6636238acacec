/**
 * The file-system facts the decision reads (SPEC S8.1), and the one place they are gathered.
 * `decide()` asks a {@link Lookups} for every fact it needs — a path's real path, what a path
 * is, whether it exists, where magi's own PATH finds a program — and does no I/O itself.
 * `gatherFacts` answers those questions from the file system (once each, recorded);
 * {@link fromFacts} answers them from a record only, so the decision is a pure function of
 * the call, the facts and the settings.
 *
 * @module
 */
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { pathExists, statReaches } from "../core/exists.ts";

/** What a path is, following symlinks: its kind, permission bits and change time (ms). */
export interface StatFact {
  kind: "file" | "dir" | "other";
  mode: number;
  /** Status change time in ms since the epoch; null where the system gives none. */
  ctime: number | null;
}

/** Where a program was found on PATH, and its real path. */
export interface Located {
  found: string;
  real: string;
}

/** The facts of one call, as gathered: each question asked, and its answer. */
export interface FsFacts {
  /** `realpath(path)` (every symlink resolved), or null when a component is missing. */
  real: Map<string, string | null>;
  /** `stat(path)` (symlinks followed), or null when it fails. */
  stat: Map<string, StatFact | null>;
  /** Whether `lstat(path)` succeeds. */
  exists: Map<string, boolean>;
  /** The program of a name on magi's own PATH, skipping folders inside the roots, or null. */
  trusted: Map<string, Located | null>;
  /**
   * When this session started (ms since the epoch): a file changed after it was changed by a
   * call (or the person) during the session. Undefined until asked.
   */
  since?: number;
  /** The text of small files the decision reads (a `.git` file's `gitdir:`), or null. */
  text: Map<string, string | null>;
}

/** The questions the decision asks of the file system. */
export interface Lookups {
  real(path: string): string | undefined;
  stat(path: string): StatFact | undefined;
  exists(path: string): boolean;
  trusted(name: string): Located | undefined;
  since(): number;
  text(path: string): string | undefined;
}

/** A question the decision asked that the facts do not answer (a bug in the gathering). */
export class MissingFact extends Error {
  constructor(what: string) {
    super(`The decision needs a fact that was not gathered: ${what}`);
  }
}

/** Empty facts. */
export function noFacts(): FsFacts {
  return {
    real: new Map(),
    stat: new Map(),
    exists: new Map(),
    trusted: new Map(),
    text: new Map(),
  };
}

/**
 * Answers from gathered facts only; does no I/O.
 *
 * @throws MissingFact for a question the facts do not answer
 */
export function fromFacts(facts: FsFacts): Lookups {
  const get = <T>(map: Map<string, T>, key: string, what: string): T => {
    if (!map.has(key)) throw new MissingFact(`${what}(${JSON.stringify(key)})`);
    return map.get(key)!;
  };
  return {
    real: (p) => get(facts.real, p, "real") ?? undefined,
    stat: (p) => get(facts.stat, p, "stat") ?? undefined,
    exists: (p) => get(facts.exists, p, "exists"),
    trusted: (n) => get(facts.trusted, n, "trusted") ?? undefined,
    since: () => {
      if (facts.since === undefined) throw new MissingFact("since()");
      return facts.since;
    },
    text: (p) => get(facts.text, p, "text") ?? undefined,
  };
}

/** When this process — the session — started. */
const STARTED = Date.now();

/**
 * Resolves a path like `realpath -m` over the facts: component by component, each symlink
 * resolved where it stands (`link/..` is the link target's parent); components that do not
 * exist are kept as written. `realPathLenient` in `roots.ts` is this over the system.
 *
 * @param path absolute (a relative one is taken from `/`)
 */
export function lenientReal(look: Pick<Lookups, "real">, path: string): string {
  if (!isAbsolute(path)) path = resolve("/", path);
  const whole = look.real(path);
  if (whole !== undefined) return whole;
  let at = "/";
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      at = dirname(at);
      continue;
    }
    const next = join(at, part);
    at = look.real(next) ?? next;
  }
  return at;
}

/** A word's path from its folder, as the program opens it (see {@link lenientReal}). */
export function physicalWith(look: Lookups, base: string, path: string): string {
  return lenientReal(look, isAbsolute(path) ? path : `${base}/${path}`);
}

/**
 * The first executable `name` on PATH: where it is and its real path; undefined when none.
 *
 * @param skip folders not searched (and, when given, relative entries are skipped too)
 */
export function locateWith(
  look: Lookups,
  name: string,
  path: string,
  cwd: string,
  skip?: (dir: string) => boolean,
): Located | undefined {
  for (const entry of path.split(delimiter)) {
    const dir = resolve(cwd, entry === "" ? "." : entry);
    if (skip?.(dir) || (skip && !isAbsolute(entry))) continue;
    const candidate = join(dir, name);
    const info = look.stat(candidate);
    if (info?.kind === "file" && (info.mode & 0o111) !== 0) {
      const real = look.real(candidate);
      if (real !== undefined) return { found: candidate, real };
    }
  }
  return undefined;
}

/** The system's answers, uncached. A miss is answered without the exception (`statReaches`). */
function systemReal(path: string): string | null {
  if (!statReaches(path)) return null;
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

function systemStat(path: string): StatFact | null {
  if (!statReaches(path)) return null;
  try {
    const s = Deno.statSync(path);
    return {
      kind: s.isFile ? "file" : s.isDirectory ? "dir" : "other",
      mode: s.mode ?? 0o755,
      ctime: s.ctime?.getTime() ?? null,
    };
  } catch {
    return null;
  }
}

/** At most this much of a file is read as a fact. */
const TEXT_BYTES = 4096;

function systemText(path: string): string | null {
  try {
    const file = Deno.openSync(path);
    try {
      if (!file.statSync().isFile) return null;
      const buf = new Uint8Array(TEXT_BYTES);
      const n = file.readSync(buf) ?? 0;
      return new TextDecoder().decode(buf.subarray(0, n));
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

/** What the trusted look-up needs of the policy: magi's PATH and the roots. */
export interface TrustScope {
  env: Record<string, string>;
  roots: readonly string[];
  /** When the session started (ms since the epoch; default: when this process did). */
  since?: number;
}

/** Per scope: where magi's own PATH finds each program (PATH does not move in a session). */
const trustedCache = new WeakMap<TrustScope, Map<string, Located | null>>();

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/**
 * Gathers facts from the file system: each question is asked of the system once and its
 * answer recorded in `into`, so every later question of the same call gets the same answer.
 *
 * @param scope the policy (its PATH and roots, for {@link Lookups.trusted})
 * @param into the record to fill (default: a new one)
 */
export function gatheringLookups(scope: TrustScope, into: FsFacts = noFacts()): {
  look: Lookups;
  facts: FsFacts;
} {
  const memo = <T>(map: Map<string, T>, key: string, ask: (k: string) => T): T => {
    if (!map.has(key)) map.set(key, ask(key));
    return map.get(key)!;
  };
  const look: Lookups = {
    real: (p) => memo(into.real, p, systemReal) ?? undefined,
    stat: (p) => memo(into.stat, p, systemStat) ?? undefined,
    exists: (p) => memo(into.exists, p, pathExists),
    trusted: (name) =>
      memo(into.trusted, name, () => {
        let cache = trustedCache.get(scope);
        if (!cache) trustedCache.set(scope, cache = new Map());
        if (!cache.has(name)) {
          // Asked of the system, not recorded: the call's facts keep only the answer.
          const sys = gatheringLookups(scope).look;
          const inRoots = (dir: string) => {
            const real = lenientReal(sys, dir);
            return scope.roots.some((r) => within(real, r));
          };
          cache.set(name, locateWith(sys, name, scope.env.PATH ?? "", "/", inRoots) ?? null);
        }
        return cache.get(name)!;
      }) ?? undefined,
    since: () => into.since ??= scope.since ?? STARTED,
    text: (p) => memo(into.text, p, systemText) ?? undefined,
  };
  return { look, facts: into };
}

/** Answers from the file system, as gathered now (for what is not the decision: launching). */
export function systemLookups(scope: TrustScope): Lookups {
  return gatheringLookups(scope).look;
}

/**
 * Whether the system still gives every answer `facts` records: each question asked again,
 * as {@link gatheringLookups} asks it, and compared. The decision asks its questions one after
 * another, each chosen by the answers before it, so the same answers lead it through the same
 * questions to the same verdict: a verdict over `facts` holds while this says true.
 *
 * @param scope the policy the facts were gathered for (its PATH, roots and start)
 */
export function factsHold(scope: TrustScope, facts: FsFacts): boolean {
  const now = gatheringLookups(scope).look;
  for (const [p, was] of facts.real) if ((now.real(p) ?? null) !== was) return false;
  for (const [p, was] of facts.stat) {
    const is = now.stat(p);
    if ((is === undefined) !== (was === null)) return false;
    if (is && was && (is.kind !== was.kind || is.mode !== was.mode || is.ctime !== was.ctime)) {
      return false;
    }
  }
  for (const [p, was] of facts.exists) if (now.exists(p) !== was) return false;
  for (const [name, was] of facts.trusted) {
    const is = now.trusted(name);
    if ((is === undefined) !== (was === null)) return false;
    if (is && was && (is.found !== was.found || is.real !== was.real)) return false;
  }
  if (facts.since !== undefined && now.since() !== facts.since) return false;
  for (const [p, was] of facts.text) if ((now.text(p) ?? null) !== was) return false;
  return true;
}
