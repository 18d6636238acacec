/** The style `magi new` reports for a help text (`read the help of "ls --help" (gnu style…)`). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseHelp } from "../../lib/scaffold/help_parse.ts";
import { TESTDATA } from "../helpers.ts";

const CORPUS = join(TESTDATA, "new", "corpus");
const styleOf = (name: string, words: string[]) =>
  parseHelp(Deno.readTextFileSync(join(CORPUS, `${name}.txt`)), words).style;

Deno.test("GNU help whose option descriptions end in ':' is gnu, not cobra", () => {
  // ls: "--quoting-style=WORD   use quoting style WORD for entry names:"
  assert.equal(styleOf("ls", ["ls"]), "gnu");
  assert.equal(styleOf("sort", ["sort"]), "gnu");
});

Deno.test("kubectl's flag=default lines are still cobra", () => {
  assert.equal(styleOf("kubectl-version", ["kubectl", "version"]), "cobra");
});
