/**
 * The false-positive corpus of the masking bench: real text that holds no secret, and a
 * set of realistic secrets; any `$NAME` the masker writes into it is over-masking.
 *
 * The text: JavaScript and TypeScript sources from `node_modules`, `git log -p` of this
 * repository, and base64, base32 and `xxd` dumps of system binaries (dense with near-misses
 * of encoded forms).
 *
 * @module
 */
import { join } from "node:path";
import { fromByteString, toByteString, utf8ByteString } from "../lib/pipeline/bytes.ts";
import { FRAGMENT, FragmentSearch } from "../lib/pipeline/fragments.ts";
import { skeleton } from "../lib/pipeline/skeleton.ts";
import { Masker, type Secret } from "../lib/pipeline/mask.ts";

/** A deterministic generator (so the corpus's secrets are the same in every run). */
function generator(seed: number): (n: number) => number {
  return (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 8) % n;
}

/**
 * Realistic secrets: API-key-like random strings (alphanumeric, hex, base64url, with the
 * prefixes of known token formats), UUIDs, and passwords people choose.
 */
export function corpusSecrets(count = 100): Secret[] {
  const random = generator(42);
  const pick = (alphabet: string, n: number) =>
    Array.from({ length: n }, () => alphabet[random(alphabet.length)]).join("");
  const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const kinds = [
    () => "ghp_" + pick(alnum, 36),
    () => "sk_live_" + pick(alnum, 24),
    () => "AKIA" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    () => pick("0123456789abcdef", 40),
    () => pick(alnum + "-_", 43),
    () => pick(alnum, 32),
    () => crypto.randomUUID(),
    () => pick(alnum + "!@#%^&*", 16),
    // Passwords people choose: words, digits, a symbol. Made here, so that this file (and
    // the git history the corpus reads) never holds them.
    () => {
      const words = ["summer", "dragon", "monkey", "horse", "battery", "staple", "sunshine"];
      const word = () => words[random(words.length)];
      const title = (w: string) => w[0].toUpperCase() + w.slice(1);
      return [
        () => title(word()) + (1970 + random(60)) + "!#$&"[random(4)],
        () => [word(), word(), word(), word()].join("-"),
        () => title(word()).replace("o", "0").replace("a", "@") + pick("0123456789", 3),
      ][random(3)]();
    },
  ];
  return Array.from(
    { length: count },
    (_, i) => ({ name: `S${i}`, value: kinds[i % kinds.length]() }),
  );
}

async function output(cmd: string, args: string[], limit: number): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output();
  return toByteString(out.stdout.subarray(0, limit));
}

async function sources(dir: string, limit: number): Promise<string> {
  let text = "";
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      if (text.length >= limit) return;
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile && /\.(m?js|ts|json|md)$/.test(e.name)) {
        text += toByteString(await Deno.readFile(p));
      }
    }
  };
  await walk(dir);
  return text.slice(0, limit);
}

/** The corpus's parts, each a byte string of at most `limit` bytes. */
export async function corpusTexts(repo: string, limit: number): Promise<Record<string, string>> {
  const bins = ["/usr/bin/ls", "/usr/bin/git", "/usr/bin/bash"];
  return {
    "node_modules sources": await sources(join(repo, "node_modules"), limit),
    "git log -p": await output("git", ["-C", repo, "log", "-p", "--no-color"], limit),
    "base64 of binaries": await output("sh", ["-c", `cat ${bins.join(" ")} | base64`], limit),
    "base32 of binaries": await output("sh", ["-c", `cat ${bins.join(" ")} | base32`], limit),
    "xxd of binaries": await output("sh", ["-c", `cat ${bins.join(" ")} | xxd`], limit),
  };
}

/** How many `$S…` replacements the masker makes in each part of the corpus. */
export function falsePositives(texts: Record<string, string>, secrets = corpusSecrets()) {
  const masker = new Masker(secrets);
  const hits: Record<string, number> = {};
  for (const [part, text] of Object.entries(texts)) {
    const stream = masker.stream();
    let out = "";
    for (let i = 0; i < text.length; i += 65536) out += stream.push(text.slice(i, i + 65536));
    out += stream.end();
    hits[part] = (out.match(/\$S\d+/g) ?? []).length - (text.match(/\$S\d+/g) ?? []).length;
  }
  return hits;
}

/**
 * How many fragment hits (runs of at least `length` characters of a secret's skeleton) the
 * corpus holds, for each length: the measurement that chose {@link FRAGMENT}.
 */
export function fragmentHits(
  texts: Record<string, string>,
  lengths: readonly number[],
  secrets = corpusSecrets(),
): Record<number, number> {
  const skeletons = Object.values(texts).map((t) => skeleton(t));
  const hits: Record<number, number> = {};
  for (const length of lengths) {
    const search = new FragmentSearch(
      secrets.map((s) => skeleton(utf8ByteString(s.value))),
      length,
    );
    hits[length] = skeletons.reduce((n, t) => n + search.findAll(t, fromByteString(t)).length, 0);
  }
  return hits;
}

if (import.meta.main) {
  const repo = new URL("..", import.meta.url).pathname;
  const texts = await corpusTexts(repo, Number(Deno.args[0] ?? 8) * 1048576);
  const sizes = Object.values(texts).reduce((a, t) => a + t.length, 0);
  const start = performance.now();
  console.log(fragmentHits(texts, [8, 9, 10, 11, 12, 14, 16]), `chosen: ${FRAGMENT}`);
  console.log(
    falsePositives(texts),
    `${(sizes / 1048576).toFixed(1)} MiB`,
    `${(performance.now() - start).toFixed(0)} ms`,
  );
}
