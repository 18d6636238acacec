/**
 * What masking catches, form by form, produced by the everyday commands themselves (bash,
 * coreutils, node) and checked in said, shown and the spill file of a real tools_dir call.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { skeleton } from "../../lib/pipeline/skeleton.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { base32 } from "../../lib/pipeline/encodings.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

/** Secrets: a token, a password holding `\` and `'` (and `"`), a URL's password. */
const TOKEN = "ghp_R4nd0mT0k3nVa1ue9xYz8wVu7tSr6qPo5nM2";
const PASSWORD = `pa\\ss'w"rd-Zx9#Q7!v`;
const DB_PASSWORD = "Db-pa55-w0rd-Kq81";
const DATABASE_URL = `postgres://app:${DB_PASSWORD}@db.internal:5432/app`;
const GH_PAT = "ghp_Zz0Yy1Xx2Ww3Vv4Uu5Tt6Ss7Rr8Qq9Pp0Oo1Nn";
const STRIPE_SK = "sk_live_51HcQ2aLkF8sZx0PqW3eRt7Yu";

const ENV = {
  TOK_TOKEN: TOKEN,
  APP_PASSWORD: PASSWORD,
  DATABASE_URL,
  GH_PAT,
  STRIPE_SK,
};

/** Python's `repr` of a str (single quotes unless the text holds `'` and no `"`). */
function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const c of s) {
    if (c === "\\") out += "\\\\";
    else if (c === quote) out += "\\" + c;
    else if (c === "\n") out += "\\n";
    else out += c;
  }
  return quote + out + quote;
}

/** [what, shell command, the secret it reveals, stdin]. Each command prints one form. */
const FORMS: Array<[string, string, string, string?]> = [
  [
    "grep --color=always on part of it",
    `printf 'x=%s\\n' "$TOK_TOKEN" | grep --color=always 'T0k3n'`,
    TOKEN,
  ],
  [
    "SGR colours inside",
    `printf '\\033[1m%s\\033[31m%s\\033[0m\\n' "\${TOK_TOKEN:0:15}" "\${TOK_TOKEN:15}"`,
    TOKEN,
  ],
  [
    "an OSC 8 link around it",
    `printf '\\033]8;;http://x\\033\\\\%s\\033]8;;\\033\\\\\\n' "$TOK_TOKEN"`,
    TOKEN,
  ],
  ["printf %q", `printf '%q\\n' "$APP_PASSWORD"`, PASSWORD],
  ["bash -x", `bash -x -c ': "$APP_PASSWORD"' 2>&1`, PASSWORD],
  [
    "node's inspect",
    `node -e 'console.log(require("util").inspect(process.env.APP_PASSWORD))'`,
    PASSWORD,
  ],
  ["node's inspect in an object", `node -e 'console.log({p: process.env.APP_PASSWORD})'`, PASSWORD],
  ["Python's repr", "cat", PASSWORD, pyRepr(PASSWORD) + "\n"],
  ["JSON escaped twice", "cat", PASSWORD, JSON.stringify(JSON.stringify({ p: PASSWORD })) + "\n"],
  ["tr a-z A-Z", `printf '%s\\n' "$TOK_TOKEN" | tr a-z A-Z`, TOKEN],
  ["tr A-Z a-z", `printf '%s\\n' "$TOK_TOKEN" | tr A-Z a-z`, TOKEN],
  ["fold -w 5", `printf '%s\\n' "$TOK_TOKEN" | fold -w 5`, TOKEN],
  ["fold -w 13", `printf 'key: %s\\n' "$TOK_TOKEN" | fold -w 13`, TOKEN],
  ["cut -c 1-12 (a prefix)", `printf '%s\\n' "$TOK_TOKEN" | cut -c 1-12`, TOKEN.slice(0, 12)],
  ["cut -c 21- (the second half)", `printf '%s\\n' "$TOK_TOKEN" | cut -c 21-`, TOKEN.slice(20)],
  ["base32", `printf '%s' "$TOK_TOKEN" | base32`, b32(TOKEN)],
  ["base32 lower case", `printf '%s' "$TOK_TOKEN" | base32 -w 0 | tr A-Z a-z`, b32(TOKEN)],
  ["base64 wrapped at 7", `printf '%s' "$TOK_TOKEN" | base64 -w 7`, b64(TOKEN)],
  [
    "hex upper case",
    `printf '%s' "$TOK_TOKEN" | od -An -tx1 | tr -d ' \\n' | tr a-f A-F`,
    hex(TOKEN),
  ],
  [
    "UTF-16LE",
    `node -e 'process.stdout.write(Buffer.from(process.env.TOK_TOKEN, "utf16le"))'`,
    TOKEN,
  ],
  [
    "UTF-16BE with a BOM",
    `node -e 'const b = Buffer.from("\\ufeff" + process.env.TOK_TOKEN, "utf16le"); process.stdout.write(b.swap16())'`,
    TOKEN,
  ],
  ["UTF-16LE with a BOM", `printf '%s' "$TOK_TOKEN" | iconv -t UTF-16`, TOKEN],
  ["a URL with a password (DATABASE_URL)", `echo "url: $DATABASE_URL"`, DATABASE_URL],
  ["the URL's password alone", `echo "${DB_PASSWORD}"`, DB_PASSWORD],
  ["GH_PAT by its format", `echo "pat $GH_PAT"`, GH_PAT],
  ["STRIPE_SK by its format", `echo "key=$STRIPE_SK;"`, STRIPE_SK],
];

function b32(s: string): string {
  return base32(new TextEncoder().encode(s));
}
function b64(s: string): string {
  return Buffer.from(s).toString("base64");
}
function hex(s: string): string {
  return Buffer.from(s).toString("hex");
}

/** Whether `text` still shows 10 or more consecutive characters of `revealed`, in any case. */
function leaks(text: string, revealed: string): string | undefined {
  const t = skeleton(text.replaceAll("\0", ""));
  const r = skeleton(revealed);
  for (let i = 0; i + 10 <= r.length; i++) {
    if (t.includes(r.slice(i, i + 10))) return r.slice(i, i + 10);
  }
  return undefined;
}

Deno.test("every everyday form of a secret is masked in said, shown and the spill file", async () => {
  await using dir = await tempDir();
  await makeTool(
    dir.path,
    "show",
    '#!/bin/sh\nif [ "$1" = "--help" ]; then echo "Run a line."; echo "show COMMAND"; exit 0; fi\n' +
      // The form, then enough lines to be cut and spilled.
      'bash -c "$1"; i=0; while [ $i -lt 60 ]; do echo "filler line $i ........................"; i=$((i+1)); done\n',
  );
  await using t = await testRuntime({
    toolsDirs: [dir.path],
    env: ENV,
    config: { limits: { said_bytes: 1024, shown_bytes: 1024 } },
  });
  const failures: string[] = [];
  for (const [what, command, revealed, stdin] of FORMS) {
    const r = await runTool(t.rt, {
      name: "show",
      args: { args: [command], ...(stdin ? { stdin } : {}) },
    });
    assert.ok(r.spill, `${what}: spilled (said: ${JSON.stringify(r.said.slice(0, 300))})`);
    const spilled = Buffer.from(await Deno.readFile(r.spill)).toString("latin1");
    const head = spilled.slice(0, 400);
    if (!head.includes("$")) {
      failures.push(`${what}: nothing masked in ${JSON.stringify(head.slice(0, 200))}`);
    }
    for (const [channel, text] of [["said", r.said], ["shown", r.shown], ["spill", spilled]]) {
      const leak = leaks(text, revealed);
      if (leak) {
        failures.push(`${what}: ${channel} shows "${leak}": ${JSON.stringify(text.slice(0, 160))}`);
      }
    }
  }
  assert.deepEqual(failures, []);
});

Deno.test("ordinary text, hashes of a secret and near-misses are not masked", async () => {
  const masker = new Masker([
    { name: "TOK_TOKEN", value: TOKEN },
    { name: "APP_PASSWORD", value: PASSWORD },
    { name: "DATABASE_URL", value: DATABASE_URL },
  ]);
  const hashes = await Promise.all(["sha256sum", "sha1sum", "md5sum", "b2sum"].map(async (prog) => {
    const child = new Deno.Command(prog, { stdin: "piped", stdout: "piped" }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(TOKEN));
    await w.close();
    return new TextDecoder().decode((await child.output()).stdout);
  }));
  const ordinary = [
    ...hashes,
    "ghp_ tokens start with ghp_ and are 40 characters; see the docs for T0k3n rotation\n",
    "postgres://app@db.internal:5432/app (no password)\n",
    "Random0mT0k3 is not it, nor R4nd0mT0k, nor ghp_R4nd0 (9 characters)\n",
    "A normal paragraph: the pass word is stored elsewhere, 'quoted' and \"double\".\n",
    "\x1b[1mbold\x1b[0m text with colours and a line\nthat is wrapped\n",
  ];
  for (const text of ordinary) assert.equal(masker.maskText(text), text);
});
