/**
 * Credential stores that a tool's own variable moves out of HOME (`KUBECONFIG`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, `GNUPGHOME`, `XDG_CONFIG_HOME`'s `gh/` …): the list as
 * data, and the paths it names in the environment magi was started with. The sandbox and the
 * file builtins hide them exactly as the stores under HOME (`CREDENTIAL_STORES`).
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";

/**
 * One store-relocating variable and what to hide of what it names:
 * - `file`: the file it names (a `list` variable names several, `:`-separated);
 * - `folder`: the folder it names, whole;
 * - `inside`: these files inside the folder it names (the folder holds other things too).
 */
export interface RelocatedStore {
  variable: string;
  hide: "file" | "folder" | "inside";
  /** For `inside`: the files, relative to the folder. */
  files?: readonly string[];
  /** A `:`-separated list of paths (`KUBECONFIG`). */
  list?: boolean;
  /** A prefix to strip first (`FILE:` of a Kerberos keytab). */
  prefix?: RegExp;
}

/** The variables, each as its tool's documentation names it. */
export const RELOCATED_STORES: readonly RelocatedStore[] = [
  // Clouds.
  { variable: "GOOGLE_APPLICATION_CREDENTIALS", hide: "file" },
  { variable: "CLOUDSDK_CONFIG", hide: "folder" },
  { variable: "BOTO_CONFIG", hide: "file" },
  { variable: "AWS_SHARED_CREDENTIALS_FILE", hide: "file" },
  { variable: "AWS_CONFIG_FILE", hide: "file" },
  { variable: "AWS_WEB_IDENTITY_TOKEN_FILE", hide: "file" },
  { variable: "AZURE_CONFIG_DIR", hide: "folder" },
  { variable: "KUBECONFIG", hide: "file", list: true },
  { variable: "HELM_REGISTRY_CONFIG", hide: "file" },
  { variable: "TF_CLI_CONFIG_FILE", hide: "file" },
  { variable: "VAULT_CONFIG_PATH", hide: "file" },
  { variable: "OP_CONFIG_DIR", hide: "folder" },
  { variable: "RCLONE_CONFIG", hide: "file" },
  // Containers.
  { variable: "DOCKER_CONFIG", hide: "inside", files: ["config.json"] },
  { variable: "DOCKER_CERT_PATH", hide: "folder" },
  { variable: "REGISTRY_AUTH_FILE", hide: "file" },
  // Keys, passwords, tickets.
  { variable: "GNUPGHOME", hide: "folder" },
  { variable: "PASSWORD_STORE_DIR", hide: "folder" },
  { variable: "SOPS_AGE_KEY_FILE", hide: "file" },
  { variable: "NETRC", hide: "file" },
  { variable: "PGPASSFILE", hide: "file" },
  { variable: "KRB5_KTNAME", hide: "file", prefix: /^(?:FILE|WRFILE):/ },
  { variable: "KRB5_CLIENT_KTNAME", hide: "file", prefix: /^(?:FILE|WRFILE):/ },
  // Forges and package registries.
  { variable: "GH_CONFIG_DIR", hide: "folder" },
  { variable: "GLAB_CONFIG_DIR", hide: "folder" },
  { variable: "HUB_CONFIG", hide: "file" },
  { variable: "CARGO_HOME", hide: "inside", files: ["credentials.toml", "credentials"] },
  { variable: "NPM_CONFIG_USERCONFIG", hide: "file" },
  { variable: "npm_config_userconfig", hide: "file" },
  { variable: "PIP_CONFIG_FILE", hide: "file" },
  { variable: "GRADLE_USER_HOME", hide: "inside", files: ["gradle.properties"] },
  // Agents' own logins.
  { variable: "CLAUDE_CONFIG_DIR", hide: "inside", files: [".credentials.json"] },
  { variable: "CODEX_HOME", hide: "inside", files: ["auth.json"] },
];

/** The XDG base folders a HOME store (`CREDENTIAL_STORES`) may be moved to, by its prefix. */
const XDG_BASES = [
  { variable: "XDG_CONFIG_HOME", under: ".config/" },
  { variable: "XDG_DATA_HOME", under: ".local/share/" },
];

/**
 * The credential stores the environment's variables name, as absolute paths (what to hide):
 * each {@link RELOCATED_STORES} entry's, and the HOME stores' `.config/…` and `.local/share/…`
 * entries under `XDG_CONFIG_HOME` and `XDG_DATA_HOME` when set. A relative or
 * empty value names nothing. A folder that is a root or holds one is never hidden (that would
 * hide the root): only what the entry names inside it (`inside`) is, and a `folder` entry
 * gives nothing; a file is hidden wherever it lies, a root included.
 *
 * @param env the environment magi was started with
 * @param roots real absolute roots
 * @param homeStores the stores under HOME, relative to it (`CREDENTIAL_STORES`)
 * @returns absolute paths (not resolved through symlinks; the hidden list resolves them)
 */
export function relocatedStores(
  env: Readonly<Record<string, string | undefined>>,
  roots: readonly string[],
  homeStores: readonly string[],
): string[] {
  const out: string[] = [];
  const holdsRoot = (dir: string) => {
    const real = realOr(dir);
    return roots.some((r) => r === real || r.startsWith(real.endsWith("/") ? real : real + "/"));
  };
  for (const store of RELOCATED_STORES) {
    const value = env[store.variable];
    if (!value) continue;
    for (let path of store.list ? value.split(":") : [value]) {
      if (store.prefix) path = path.replace(store.prefix, "");
      if (!isAbsolute(path)) continue;
      path = resolve(path);
      if (store.hide === "file") out.push(path);
      else if (store.hide === "inside") out.push(...(store.files ?? []).map((f) => join(path, f)));
      else if (!holdsRoot(path)) out.push(path);
    }
  }
  for (const { variable, under } of XDG_BASES) {
    const base = env[variable];
    if (!base || !isAbsolute(base)) continue;
    for (const rel of homeStores) {
      if (!rel.startsWith(under)) continue;
      const path = join(resolve(base), rel.slice(under.length));
      if (!holdsRoot(path)) out.push(path);
    }
  }
  const made = [...new Set(out)];
  for (const p of made) named.add(p);
  return made;
}

/** Every path {@link relocatedStores} has given: each is a credential store. */
const named = new Set<string>();

/** Whether `path` (absolute) is a store a variable named (for the hidden list's reason). */
export function isRelocatedStore(path: string): boolean {
  return named.has(path);
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
