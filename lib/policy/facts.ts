/**
 * The facts the door decides on, gathered before it (SPEC S8.1): the judge's verdict — the
 * rules over the call, which need the file system and PATH (real paths of the words, the
 * program each name finds, asked through `fs_facts.ts`) — the session's sandbox settings and
 * whether a sandbox can start. `decide()` over gathered facts and `door.ts` read nothing.
 *
 * @module
 */
import { type CallFacts, decide, type Policy, type Verdict } from "./decide.ts";
import { factsHold, fromFacts, type FsFacts, gatheringLookups } from "./fs_facts.ts";
import type { DoorSettings } from "./door.ts";
import { dirname, join } from "node:path";
import { magiOwnDirs } from "./protected.ts";
import { privateDir } from "../core/private.ts";
import {
  sandboxLauncher,
  type SandboxSettings,
  sandboxSettings,
  scratchDir,
  type Wrap,
} from "../confinement/sandbox.ts";
import { xdgBase } from "../core/xdg.ts";
import { markWriting } from "./planted.ts";
import { statReaches } from "../core/exists.ts";
import { systemTempDir } from "../core/temp.ts";
import {
  CREDENTIAL_STORES,
  type Hidden,
  hiddenEntries,
  type HiddenSet,
  passwdHome,
  within,
} from "../confinement/sandbox_paths.ts";
import { relocatedStores } from "../confinement/relocated_stores.ts";

/** The session's settings for the door, with the sandbox's own. */
export interface SessionSettings extends DoorSettings {
  sandbox: SandboxSettings;
  /** Unix sockets a sandboxed command may reach (the approvals socket). */
  sockets: string[];
  /**
   * Folders of the session a sandboxed command still reaches although magi's state is hidden:
   * `visible` read-only (the session's folder, for MAGI_CONTEXT_PATH), `writable` in every
   * mode (the call's MAGI_ATTACH_DIR); `hidden` adds folders to hide (a sessions_dir set in
   * config). Filled in when the session starts.
   */
  visible?: string[];
  /** What the call's programs need that may lie in the system temp folder (see `SandboxScope`). */
  needed?: string[];
  writable?: string[];
  hidden?: string[];
  /**
   * What magi runs later outside any sandbox (`runs_later.ts`: its code, Deno, hooks' and MCP
   * servers' programs): read-only wherever a root holds it. Filled in when the session starts.
   */
  runsLater?: string[];
  /**
   * Tool folders magi reads at start that are missing (a `tools_dir`, a `lua_dirs` folder):
   * made empty and read-only by the sandbox where their parent exists, refused by `write`.
   */
  laterMissing?: string[];
  /** Tells the person (stderr) what a model's call was refused and what would allow it. */
  tell?: (line: string) => void;
  /**
   * The home folder `/etc/passwd` gives magi's uid, read there on first use (`passwdHome`;
   * tests name a folder): its credential stores are hidden as HOME's, and it stands for HOME
   * when HOME is unset.
   */
  userHome?: string;
}

const settingsOf = new WeakMap<Policy, SessionSettings>();

/** Sets the session's settings of a policy (the runtime does, once). */
export function setSessionSettings(policy: Policy, settings: SessionSettings): void {
  settingsOf.set(policy, settings);
}

/**
 * The session's settings of a policy; a policy no runtime set up (a test's) runs as the
 * legacy `policy.sandbox` says: sandboxed in workspace-write when it is on, else unsandboxed.
 */
export function sessionSettings(policy: Policy): SessionSettings {
  const set = settingsOf.get(policy);
  if (set) return set;
  const sandbox = sandboxSettings({ policy: { sandbox: policy.sandbox ?? false } });
  if (!policy.sandbox) sandbox.mode = "off";
  const made: SessionSettings = {
    mode: sandbox.mode,
    explicit: true,
    approval: "ask",
    sandbox,
    sockets: [],
  };
  settingsOf.set(policy, made);
  return made;
}

/**
 * The file-system facts a call's decision needs, gathered from the system: the questions
 * `decide` asks (real paths of the words, what each path is, the program each name finds),
 * each asked once and recorded. Gathering walks the same questions the decision will ask.
 */
export function gatherFacts(policy: Policy, call: CallFacts): FsFacts {
  const { look, facts } = gatheringLookups(policy);
  decide(policy, call, look);
  return facts;
}

/**
 * The judge's verdict on a call: its facts gathered first ({@link gatherFacts}), then the
 * rules decided over them alone (no I/O).
 *
 * Decided once per distinct call: the verdict is kept with the facts it was decided over, by
 * the policy and the whole call (tool, source, arguments, folder, PATH, words). A later call
 * alike gets it only while the system still gives every one of those answers (`factsHold`
 * asks each question again): the decision is a pure function of the policy, the call and the
 * facts, and it asks its questions in an order its answers alone choose, so the same answers
 * give the same verdict. A policy whose rules, roots or environment differ from those the
 * verdicts were kept under (a new config makes a new policy) starts afresh.
 */
export function judge(policy: Policy, call: CallFacts): Verdict {
  const parts = [call.tool, call.source, call.args, call.cwd, call.path ?? "", call.argv ?? ""];
  // A call JSON cannot spell one way (undefined, -0, a Map…) is decided afresh each time.
  if (!plainJson(parts)) return decide(policy, call, fromFacts(gatherFacts(policy, call)));
  const key = JSON.stringify(parts);
  const kept = judgedOf(policy);
  const hit = kept.verdicts.get(key);
  if (hit && factsHold(policy, hit.facts)) {
    // Most recently used last: the oldest goes first when the map is full.
    kept.verdicts.delete(key);
    kept.verdicts.set(key, hit);
    return hit.verdict;
  }
  const facts = gatherFacts(policy, call);
  const verdict = Object.freeze(decide(policy, call, fromFacts(facts)));
  kept.verdicts.set(key, { facts, verdict });
  if (kept.verdicts.size > JUDGED_MAX) kept.verdicts.delete(kept.verdicts.keys().next().value!);
  return verdict;
}

/**
 * Whether `value` is made of strings, finite numbers (not -0), booleans, null, arrays and
 * plain objects without undefined members alone: then its JSON text names it and nothing else.
 */
function plainJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !plainJson(value[i], depth + 1)) return false;
    }
    return true;
  }
  if (typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    // A symbol, a hidden member or a getter is not in the JSON text, or not one value.
    if (typeof key !== "string" || !d.enumerable || !("value" in d)) return false;
    if (!plainJson(d.value, depth + 1)) return false;
  }
  return true;
}

/** How many distinct calls' verdicts a policy keeps. */
const JUDGED_MAX = 256;

interface Judged {
  /** What the verdicts were decided under (a change empties them). */
  under: { rules: Policy["rules"]; count: number; roots: string; env: string; since?: number };
  verdicts: Map<string, { facts: FsFacts; verdict: Verdict }>;
}

const judgedBy = new WeakMap<Policy, Judged>();

/** The verdicts kept for `policy`, emptied when what they were decided under changed. */
function judgedOf(policy: Policy): Judged {
  const under = {
    rules: policy.rules,
    count: policy.rules.length,
    roots: JSON.stringify(policy.roots),
    env: JSON.stringify([policy.env, policy.sandbox]),
    since: policy.since,
  };
  const kept = judgedBy.get(policy);
  if (
    kept && kept.under.rules === under.rules && kept.under.count === under.count &&
    kept.under.roots === under.roots && kept.under.env === under.env &&
    kept.under.since === under.since
  ) {
    return kept;
  }
  const fresh: Judged = { under, verdicts: new Map() };
  judgedBy.set(policy, fresh);
  return fresh;
}

/** The launcher for a call the door lets run in `mode`; undefined for "off". */
export function launcherFor(
  policy: Policy,
  mode: "read-only" | "workspace-write" | "off",
): Wrap | undefined {
  if (mode === "off") return undefined;
  const settings = sessionSettings(policy);
  const userHome = userHomeOf(settings);
  const wrap = sandboxLauncher(settings.sandbox, {
    roots: policy.roots,
    home: homeOf(policy, settings),
    userHome,
    hidden: hiddenOwn(policy),
    ownDirs: [...ownDirsMade(policy.env), ...runsLater(policy)],
    visible: settings.visible,
    needed: settings.needed,
    sockets: settings.sockets,
    scratch: [scratchDir(), ...settings.writable ?? []],
  }, mode);
  // What it plants in the roots' repositories is looked for when it ends (`planted.ts`).
  return mode === "workspace-write" ? markWriting(wrap) : wrap;
}

/** The passwd home of magi's uid (see {@link SessionSettings.userHome}), read once. */
function userHomeOf(settings: SessionSettings): string {
  return settings.userHome ??= passwdHome();
}

/** HOME, or the passwd home when HOME is unset (cron, `env -i`); "" when neither is known. */
function homeOf(policy: Policy, settings: SessionSettings): string {
  return policy.env.HOME ?? userHomeOf(settings);
}

/**
 * What magi runs later outside any sandbox that exists now (a missing one is not made as a
 * mount point): kept read-only by the sandbox and refused by `write` and `edit`. A folder a
 * root lies in or is (magi's own checkout, when the person works on magi itself) is the
 * person's project, not kept.
 */
export function runsLater(policy: Policy): string[] {
  const settings = sessionSettings(policy);
  const exists = (p: string) => {
    try {
      Deno.lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const now = (settings.runsLater ?? []).filter((p) => exists(p));
  // A missing tool folder whose parent exists: a program could make it and fill it.
  const missing = (settings.laterMissing ?? []).filter((p) =>
    p !== dirname(p) && exists(dirname(p))
  );
  return [...new Set([...now, ...missing])].filter((p) => !policy.roots.some((r) => within(r, p)));
}

/**
 * What the session hides besides the credential stores under HOME and `sandbox.deny_read`:
 * magi's own files, the session's (a `sessions_dir`), the ticket cache `KRB5CCNAME` names,
 * the credential stores the environment's variables name (`relocated_stores.ts`).
 */
function hiddenOwn(policy: Policy): string[] {
  return [
    ...magiOwnFiles(policy.env),
    ...sessionSettings(policy).hidden ?? [],
    ...relocatedStores(policy.env, policy.roots, CREDENTIAL_STORES),
  ];
}

/**
 * What a call of the file builtins may not read or write, as the sandbox hides it from a
 * program (one list: `hiddenEntries` over the same inputs): the credential stores under HOME,
 * `sandbox.deny_read`, magi's own files, the temp folders' Kerberos ticket caches — but for
 * the session's visible folders.
 */
export function hiddenFor(policy: Policy): HiddenSet {
  const settings = sessionSettings(policy);
  const userHome = userHomeOf(settings);
  const inputs = [homeOf(policy, settings), settings.sandbox.denyRead, hiddenOwn(policy)] as const;
  const keep = [...policy.roots, ...settings.needed ?? [], ...settings.visible ?? []];
  const key = JSON.stringify([inputs, keep, userHome]);
  let kept = hiddenKept.get(key);
  if (!kept || kept.folders.some(([dir, stamp]) => !stampHolds(dir, stamp))) {
    const walked: string[] = [];
    const entries = hiddenEntries(...inputs, systemReal, walked, keep, userHome).map((h) => ({
      ...h,
      kind: kindNow(h.path),
    }));
    const folders = new Set<string>();
    // The folders up to HOME or the passwd home (its own identity included) for what lies in
    // it; the folder alone for what does not (above, the busy temp folder would void the set
    // on every call).
    const homes = [inputs[0], userHome].filter((h) => h !== "");
    for (const e of entries) {
      const top = homes.find((h) => within(e.path, h)) ?? dirname(e.path);
      for (let d = dirname(e.path); within(d, top); d = dirname(d)) {
        folders.add(d);
        if (d === top) break;
      }
    }
    // The hidden folders read for symlinks: a link made there later changes them.
    for (const d of walked) folders.add(d);
    kept = { entries, folders: [...folders].map((d) => [d, stampOf(d)]) };
    hiddenKept.set(key, kept);
    if (hiddenKept.size > 16) hiddenKept.delete(hiddenKept.keys().next().value!);
  }
  const temps = [...new Set([systemTempDir(), "/tmp"].map((t) => systemReal(t) ?? t))];
  return { entries: kept.entries, visible: [...settings.visible ?? []], temps };
}

/**
 * The hidden entries as last resolved, with the folders they lie in and each one's identity
 * and times then: a store made, moved or swapped for a symlink changes its folder's (one
 * `stat` per folder, cheaper than resolving every entry on every call).
 */
const hiddenKept = new Map<string, { entries: Hidden[]; folders: [string, string][] }>();

function kindNow(path: string): Hidden["kind"] {
  try {
    const st = Deno.lstatSync(path);
    return st.isSymlink ? "link" : st.isDirectory ? "dir" : "file";
  } catch {
    return "missing";
  }
}

/**
 * Whether `dir`'s stamp is still `stamp` (as {@link stampOf} would say). A folder recorded as
 * missing that `stat` still cannot reach is taken as unchanged: it is missing, or a symlink
 * that leads nowhere (or where magi cannot search), beneath which nothing can be read or made
 * until it leads somewhere — and then `stat` reaches it and the stamp is compared. (Most of the
 * folders are missing: `statReaches` answers a miss without the exception of `lstat`.)
 */
function stampHolds(dir: string, stamp: string): boolean {
  if (stamp === "missing" && !statReaches(dir)) return true;
  return stampOf(dir) === stamp;
}

function stampOf(dir: string): string {
  try {
    const st = Deno.lstatSync(dir);
    return `${st.ino}:${st.mtime?.getTime()}:${st.ctime?.getTime()}:${st.isSymlink}`;
  } catch {
    return "missing";
  }
}

/**
 * magi's own files a sandboxed command never reads: the user's config file and magi's state
 * folder (sessions, spills, the MCP token, caches), and the Kerberos ticket cache `KRB5CCNAME`
 * names as a file. The credential stores under HOME are the sandbox's own list
 * (`CREDENTIAL_STORES`).
 */
function magiOwnFiles(env: Record<string, string>): string[] {
  const config = xdgBase(env, "config");
  const state = xdgBase(env, "state");
  const out: string[] = [];
  if (config) out.push(join(config, "magi", "config.jsonc"));
  if (state) out.push(join(state, "magi"));
  if (env.MAGI_CONFIG) out.push(env.MAGI_CONFIG);
  const ticket = /^(?:FILE:)?(\/.+)$/.exec(env.KRB5CCNAME ?? "")?.[1];
  if (ticket) out.push(ticket);
  return out;
}

/**
 * magi's own folders, made (0700) where missing: the sandbox mounts them read-only where a
 * root holds them, and would otherwise make them itself with the umask's mode.
 */
function ownDirsMade(env: Record<string, string>): string[] {
  const dirs = magiOwnDirs(env);
  for (const dir of dirs) {
    try {
      privateDir(dir);
    } catch {
      // Not ours to make (a read-only HOME): the sandbox leaves a missing folder missing.
    }
  }
  return dirs;
}

function systemReal(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}
