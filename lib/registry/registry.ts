/**
 * The registry (SPEC S1): a catalogue with one entry per tool name, fed by sources. It never
 * runs anything; the pipeline does.
 *
 * @module
 */
import type { Declaration, Tool, Warn } from "../core/types.ts";

/** What every provider accepts as a tool name. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The order in which sources claim names: when two sources declare the same name, the
 * earlier source in this list keeps it and the later one is left out with one stderr line.
 * Declarations from the project's own `.magi/` folder rank just after the builtins.
 * Within one source, the first declaration wins (for tools_dir: the order of the folders
 * in the config, then folder names in byte order).
 */
export const SOURCE_ORDER = ["lua", "builtin", "tools_dir", "shipped", "peer", "mcp"] as const;

function rank(tool: Tool): number {
  const i = (SOURCE_ORDER as readonly string[]).indexOf(tool.origin.source);
  const base = i === -1 ? SOURCE_ORDER.length : i;
  // A project's own declarations come after the builtins: a cloned repository must not be
  // able to answer for `read` or `run`, which the policy trusts by name.
  if (tool.origin.project && base < SOURCE_ORDER.indexOf("builtin")) {
    return SOURCE_ORDER.indexOf("builtin") + 0.5;
  }
  return base;
}

function masked(tool: Tool, mask: (text: string) => string): Tool {
  const { description, parameters } = tool.declaration;
  const safeDescription = mask(description);
  const json = JSON.stringify(parameters);
  const safeJson = mask(json);
  if (safeDescription === description && safeJson === json) return tool;
  const declaration = {
    ...tool.declaration,
    description: safeDescription,
    parameters: JSON.parse(safeJson),
  };
  return Object.assign(Object.create(Object.getPrototypeOf(tool)), tool, { declaration });
}

function describe(tool: Tool): string {
  return `${tool.origin.source} ${tool.origin.where}`;
}

/**
 * The catalogue: one tool per name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "./registry.ts";
 * import type { Tool } from "../core/types.ts";
 * const tool = (name: string, source: string): Tool => ({
 *   declaration: { name, description: `${name} from ${source}`, parameters: { type: "object" } },
 *   origin: { source, where: `/tools/${name}` },
 *   invoke: () => Promise.resolve({ isError: false }),
 * });
 * const warnings: string[] = [];
 * const registry = new Registry(
 *   [tool("hello", "tools_dir"), tool("hello", "lua"), tool("bad name!", "tools_dir")],
 *   (line) => warnings.push(line),
 * );
 * assert.equal(registry.get("hello")?.origin.source, "lua"); // Lua comes first
 * assert.deepEqual(registry.declarations().map((d) => d.name), ["hello"]);
 * assert.equal(warnings.length, 2); // the collision, and the refused name
 * ```
 */
export class Registry {
  readonly #tools = new Map<string, Tool>();

  /**
   * Builds the catalogue from what the sources loaded. Order of `tools` does not matter: the
   * outcome is decided by {@link SOURCE_ORDER} and the order within each source.
   *
   * @param tools every tool from every source
   * @param warn receives one line per refused name and per collision
   * @param mask masks secrets in what the model will read: descriptions and parameter
   *   schemas (a tool's `--help` or an MCP server may print a credential)
   */
  constructor(tools: readonly Tool[], warn: Warn, mask?: (text: string) => string) {
    const ordered = tools.map((tool, i) => ({ tool, i }))
      .sort((a, b) => rank(a.tool) - rank(b.tool) || a.i - b.i);
    for (const { tool } of ordered) {
      const name = tool.declaration.name;
      if (!TOOL_NAME.test(name)) {
        warn(
          `tool ${JSON.stringify(name)} (${describe(tool)}) refused: a name must match ` +
            `^[a-zA-Z0-9_-]{1,64}$ (letters, digits, "_" and "-", at most 64)`,
        );
        continue;
      }
      const holder = this.#tools.get(name);
      if (holder) {
        warn(`tool "${name}" from ${describe(tool)} left out: ${describe(holder)} has that name`);
        continue;
      }
      this.#tools.set(name, mask ? masked(tool, mask) : tool);
    }
  }

  /** The tool with this name, if any. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Every tool, sorted by name. */
  list(): Tool[] {
    return [...this.#tools.values()].sort((a, b) =>
      a.declaration.name < b.declaration.name ? -1 : 1
    );
  }

  /** The declarations the model sees, sorted by name. */
  declarations(): Declaration[] {
    return this.list().map((tool) => tool.declaration);
  }
}
