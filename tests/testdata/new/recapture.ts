/**
 * Re-captures the corpus of help texts for magi new's tests, the way `magi new` reads them:
 * `deno run -A tests/testdata/new/recapture.ts [NAME…]`. Texts only: the expected schemas
 * beside them are checked by hand (`--expected` writes drafts of them, to be reviewed).
 */
import { join } from "node:path";
import { captureHelp, findProgram } from "../../../lib/scaffold/capture.ts";
import { genericReason, schemaFromModel } from "../../../lib/scaffold/schema_gen.ts";

const HERE = new URL(".", import.meta.url).pathname;
/** Corpus name → the command line `magi new --from` gets. */
export const CORPUS: Record<string, string> = {
  "ls": "ls",
  "wc": "wc",
  "sort": "sort",
  "git-status": "git status",
  "git-log": "git log",
  "tar": "tar",
  "curl": "curl",
  "jq": "jq",
  "http-server": "python3 -m http.server",
  "greet": "python3 programs/greet.py",
  "dotenv": "dotenv",
  "deno-run": "deno run",
  "cargo-build": "cargo build",
  "docker-ps": "docker ps",
  "kubectl-version": "kubectl version",
  "node": "node",
  "npm-ls": "npm ls",
  "ssh-keygen": "ssh-keygen",
  "naval-fate": "programs/naval_fate",
};

if (import.meta.main) {
  const expected = Deno.args.includes("--expected");
  const names = Deno.args.filter((a) => !a.startsWith("--"));
  for (const name of names.length ? names : Object.keys(CORPUS)) {
    const words = CORPUS[name].split(" ").map((w) => w.startsWith("programs/") ? join(HERE, w) : w);
    const program = findProgram(words[0], Deno.cwd(), Deno.env.get("PATH") ?? "");
    if (!program) {
      console.error(`${name}: no program ${words[0]}`);
      continue;
    }
    const got = await captureHelp(program, words, Deno.env.toObject(), Deno.cwd());
    if (!got.best) {
      console.error(`${name}: ${got.problems.join("; ")}`);
      continue;
    }
    await Deno.writeTextFile(join(HERE, "corpus", `${name}.txt`), got.best.text);
    console.error(`${name}: ${got.best.args.join(" ")} (${got.best.text.length} characters)`);
    if (expected) {
      const m = got.best.model;
      const body = genericReason(m) ? { generic: true } : { schema: schemaFromModel(m).schema };
      await Deno.writeTextFile(
        join(HERE, "corpus", `${name}.json`),
        JSON.stringify({ from: CORPUS[name], ...body }, null, 2) + "\n",
      );
    }
  }
}
