/**
 * The names `magi mcp` serves upstream tools and prompts under. By default they are the
 * registry's, `NAME__tool` and `NAME__prompt`. With config `mcp.plain_names: true` an upstream
 * tool or prompt is served under its own name when nothing else served has that name — no
 * other server's tool or prompt, and (for tools) no registry tool; names that collide keep the
 * `NAME__` prefix. A call or get by the prefixed name is always accepted.
 *
 * @module
 */
import type { Settings } from "../config/keys.ts";
import type { Registry } from "../registry/registry.ts";

/** Whether config `mcp.plain_names` is on for `values` (the config's values). */
export function plainNames(values: Pick<Settings, "mcp.plain_names">): boolean {
  return values["mcp.plain_names"];
}

/** An upstream tool's server and own name, from its origin (`mcp:SERVER/TOOL`). */
function upstreamOf(where: string): string | undefined {
  const m = where.match(/^mcp:([^*/][^/]*)\/(.+)$/);
  return m ? m[2] : undefined;
}

/**
 * Each registry tool's served name (registry name → served name). Without `plain` every
 * name is served as it is.
 */
export function servedToolNames(registry: Registry, plain: boolean): Map<string, string> {
  const tools = registry.list();
  const served = new Map(tools.map((t) => [t.declaration.name, t.declaration.name]));
  if (!plain) return served;
  const own = new Map<string, string>();
  const count = new Map<string, number>();
  for (const t of tools) {
    if (t.origin.source !== "mcp") continue;
    const name = upstreamOf(t.origin.where);
    if (name === undefined) continue;
    own.set(t.declaration.name, name);
    count.set(name, (count.get(name) ?? 0) + 1);
  }
  for (const [registryName, name] of own) {
    if (count.get(name) === 1 && !served.has(name)) served.set(registryName, name);
  }
  return served;
}

/**
 * The registry name a client's tool name stands for: a served name, or the registry name
 * itself; undefined when it names no tool.
 */
export function registryToolName(
  registry: Registry,
  plain: boolean,
  given: string,
): string | undefined {
  if (registry.get(given)) return given;
  for (const [registryName, served] of servedToolNames(registry, plain)) {
    if (served === given) return registryName;
  }
  return undefined;
}

/**
 * Served names for prompts: `{prompt, prefixed}` pairs in, the name each is served
 * under out (same order). Without `plain`, the prefixed names.
 */
export function servedPromptNames(
  prompts: readonly { prompt: string; prefixed: string }[],
  plain: boolean,
): string[] {
  if (!plain) return prompts.map((p) => p.prefixed);
  const count = new Map<string, number>();
  for (const p of prompts) count.set(p.prompt, (count.get(p.prompt) ?? 0) + 1);
  const prefixed = new Set(prompts.map((p) => p.prefixed));
  return prompts.map((p) =>
    count.get(p.prompt) === 1 && !prefixed.has(p.prompt) ? p.prompt : p.prefixed
  );
}
