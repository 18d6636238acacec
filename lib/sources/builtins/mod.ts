/**
 * The builtins compiled into magi, in the order `magi tools` lists them.
 *
 * @module
 */
import type { Builtin } from "./builtin.ts";
import { edit } from "./edit.ts";
import { grep } from "./grep.ts";
import { read } from "./read.ts";
import { run } from "./run.ts";
import { write } from "./write.ts";

/** Every builtin. */
export const BUILTINS: readonly Builtin[] = [read, write, edit, grep, run];
