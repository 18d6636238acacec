/**
 * The builtins compiled into magi, in the order `magi tools` lists them.
 *
 * @module
 */
import type { Builtin } from "../lib/registry/builtins.ts";
import { read } from "./read.ts";

/** Every builtin. */
export const BUILTINS: readonly Builtin[] = [read];
