/**
 * Credentials by a maintained rule set (SPEC S2.3): secretlint's recommended preset
 * (`@secretlint/secretlint-rule-preset-recommend` 13.1.0 — GitHub, GitLab, Slack, Stripe, AWS,
 * GCP, npm, OpenAI, Anthropic, Linear, 1Password, Vercel, private keys, basic-auth URLs, …) judges each
 * environment value that neither its name nor `token_formats.json` marks. Its verdicts are
 * kept in magi's cache (0600), keyed by a salted SHA-256 of the name and value, so a start
 * whose environment is unchanged does not load the rule set at all.
 *
 * @module
 */
import { writePrivateFile } from "../core/private.ts";

/** The rule set's name and version, as the cache and the README name it. */
export const RULE_SET = "@secretlint/secretlint-rule-preset-recommend@13.1.0";

/** Values judged: shorter ones are not tokens, longer ones are not variables' credentials. */
const MIN_BYTES = 16;
const MAX_BYTES = 16 * 1024;

interface Cache {
  ruleSet: string;
  salt: string;
  /** Salted SHA-256 of `name NUL value` → whether the rule set flags the value. */
  verdicts: Record<string, boolean>;
}

/**
 * The names of the variables whose values the rule set flags as credentials.
 *
 * @param env name → value; pass only the variables not already secrets by name or shape
 * @param cacheFile where verdicts are kept (a missing or broken file is rebuilt)
 * @returns the flagged names; an empty list when the rule set cannot load (the shapes of
 *   `token_formats.json` still hold)
 */
export async function ruleSetCredentials(
  env: Record<string, string>,
  cacheFile: string,
): Promise<string[]> {
  const candidates = Object.entries(env).filter(([, v]) =>
    v.length >= MIN_BYTES && v.length <= MAX_BYTES && !/\s/.test(v.trim())
  );
  if (candidates.length === 0) return [];
  const cache = readCache(cacheFile);
  const keyed = await Promise.all(
    candidates.map(async ([name, value]) => ({
      name,
      value,
      key: await keyOf(cache, name, value),
    })),
  );
  const unknown = keyed.filter((k) => !(k.key in cache.verdicts));
  if (unknown.length > 0) {
    let lint: (value: string) => Promise<boolean>;
    try {
      lint = await linter();
    } catch {
      return keyed.filter((k) => cache.verdicts[k.key]).map((k) => k.name);
    }
    for (const k of unknown) cache.verdicts[k.key] = await lint(k.value).catch(() => false);
    // Only this environment's verdicts are kept: a value gone from it leaves no trace.
    const kept = Object.fromEntries(keyed.map((k) => [k.key, cache.verdicts[k.key]]));
    try {
      writePrivateFile(cacheFile, JSON.stringify({ ...cache, verdicts: kept }));
    } catch {
      // No cache: the next start judges again.
    }
  }
  return keyed.filter((k) => cache.verdicts[k.key]).map((k) => k.name);
}

function readCache(file: string): Cache {
  try {
    const data = JSON.parse(Deno.readTextFileSync(file)) as Cache;
    if (data.ruleSet === RULE_SET && typeof data.salt === "string" && data.verdicts) return data;
  } catch {
    // missing or broken: made anew
  }
  const salt = encodeHex(crypto.getRandomValues(new Uint8Array(16)));
  return { ruleSet: RULE_SET, salt, verdicts: {} };
}

async function keyOf(cache: Cache, name: string, value: string): Promise<string> {
  const bytes = new TextEncoder().encode(`${cache.salt}\0${name}\0${value}`);
  return encodeHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** secretlint's core with the recommended preset, loaded on first use. */
async function linter(): Promise<(value: string) => Promise<boolean>> {
  const [{ lintSource }, { creator }] = await Promise.all([
    import("@secretlint/core"),
    import("@secretlint/secretlint-rule-preset-recommend"),
  ]);
  const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: creator }] };
  return async (value) => {
    const result = await lintSource({
      source: { filePath: "/magi/env", content: value, contentType: "text" },
      options: { config },
    });
    return result.messages.length > 0;
  };
}

function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
