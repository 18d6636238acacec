/**
 * How to start magi itself from a shell line: the command a builtin's shim in the
 * tool-links folder execs, so `run 'write f.txt < x'` reaches the `write` builtin.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { RUN_FLAGS } from "../../scripts/permissions.ts";
import { COMPILED } from "./shipped.ts";
import { shellWord } from "../core/quote.ts";
import { runsBundled } from "../core/lazy_require.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The words that start magi: the compiled executable alone, or (under `deno run`) Deno with
 * magi's permission set, the repository's config and entry point — the bundle's entry when
 * magi runs as its bundled build (scripts/bundle.ts), else `main.ts`. Absolute paths only.
 */
export function selfCommand(): string[] {
  const exe = Deno.execPath();
  if (COMPILED) return [exe];
  const entry = runsBundled() ? fileURLToPath(Deno.mainModule) : `${REPO}main.ts`;
  return [exe, "run", ...RUN_FLAGS, "--quiet", "--config", `${REPO}deno.json`, entry];
}

/** The text of a shim script that runs `magi builtin NAME` with the script's arguments. */
export function builtinShim(name: string): string {
  const words = [...selfCommand(), "builtin", name].map(shellWord).join(" ");
  return `#!/bin/sh\n# magi builtin ${name}\nexec ${words} "$@"\n`;
}
