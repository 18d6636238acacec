/**
 * magi as an MCP client (calls made as a person's, like `magi call`, so the policy's default
 * "ask" for MCP tools lets them run): the reference servers from npm (`server-everything`,
 * `server-filesystem`, pinned in deno.json and run with `deno run npm:…`, so they work
 * offline after `deno install`) and a fixture server, all reached through `runTool`.
 */
import { alive } from "../process/helpers.ts";
import { denoServer, FIXTURE } from "./servers.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeMcpServers } from "../../lib/sources/mcp/client.ts";
import { magi, REPO, tempDir, testRuntime, writeConfig } from "../helpers.ts";
import { startHttp, tokenFile } from "./_serve.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;

/** A server run by Deno from this repository's pinned packages. */
const EVERYTHING = denoServer(imports["@modelcontextprotocol/server-everything"], "stdio");
const SECRET = "tok-9f8e7d6c5b4a3f2e";

Deno.test("magi uses server-everything's tools through the pipeline", async (t) => {
  await using tr = await testRuntime({
    config: { shipped_tools: false, mcp_servers: { everything: EVERYTHING } },
    env: { MY_SERVICE_TOKEN: SECRET },
  });
  const { rt } = tr;
  try {
    await t.step("tools join as NAME__tool with their own declarations", () => {
      const echo = rt.registry.get("everything__echo");
      assert.ok(echo, `warnings: ${tr.warnings.join("; ")}`);
      assert.equal(echo.origin.source, "mcp");
      assert.match(echo.declaration.description, /Echoes back/);
      assert.deepEqual(echo.declaration.parameters.required, ["message"]);
      assert.ok(rt.registry.get("everything__get-tiny-image"));
    });

    await t.step("a call is mapped back to the server's own name", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__echo",
        args: { message: "hello there" },
      });
      assert.equal(result.is_error, false);
      assert.match(result.said, /Echo: hello there/);
    });

    await t.step("a secret echoed by the server is masked", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__echo",
        args: { message: `the token is ${SECRET}` },
      });
      assert.ok(!result.said.includes(SECRET));
      assert.ok(!result.shown.includes(SECRET));
      assert.match(result.said, /the token is \$MY_SERVICE_TOKEN/);
    });

    await t.step("structured content reaches the model", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__get-structured-content",
        args: { location: "Chicago" },
      });
      assert.equal(result.is_error, false);
      assert.match(result.said, /temperature/);
    });

    await t.step("an image is described, its bytes kept in a file", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__get-tiny-image",
        args: {},
      });
      assert.equal(result.is_error, false);
      const m = result.said.match(/\[image image\/png, (\d+) bytes, saved to (\S+)\]/);
      assert.ok(m, result.said);
      const bytes = await Deno.readFile(m[2]);
      assert.equal(bytes.length, Number(m[1]));
      assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
      assert.ok(!/[A-Za-z0-9+/]{200}/.test(result.said), "no base64 in said");
    });

    await t.step("embedded resources and resource links are described in said", async () => {
      const text = await runTool(rt, {
        caller: "person",
        name: "everything__get-resource-reference",
        args: { resourceType: "Text", resourceId: 1 },
      });
      assert.equal(text.is_error, false, text.said);
      assert.match(text.said, /\[resource \S+ \(text\/plain\), \d+ bytes:\]/);
      const blob = await runTool(rt, {
        caller: "person",
        name: "everything__get-resource-reference",
        args: { resourceType: "Blob", resourceId: 2 },
      });
      const m = blob.said.match(/\[resource \S+ .*?, (\d+) bytes, saved to (\S+)\]/);
      assert.ok(m, blob.said);
      assert.equal((await Deno.stat(m[2])).size, Number(m[1]));
      const links = await runTool(rt, {
        caller: "person",
        name: "everything__get-resource-links",
        args: { count: 2 },
      });
      assert.equal(links.said.match(/\[resource link /g)?.length, 2, links.said);
    });

    await t.step("the server's elicitation is asked of the person, field by field", async () => {
      const asked: string[] = [];
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__trigger-elicitation-request",
        args: {},
        answer: (question) => {
          asked.push(question.question);
          if (question.question.includes("\nString (Your full")) return Promise.resolve("Ada");
          if (question.question.includes("\nBoolean")) {
            assert.deepEqual(question.choices, ["yes", "no"]);
            return Promise.resolve("yes");
          }
          return Promise.resolve("");
        },
      });
      assert.equal(result.is_error, false, result.said);
      assert.match(asked[0], /^Please provide inputs/);
      assert.match(result.said, /- Name: Ada/);
      assert.match(result.said, /- Agreed to terms: true/);
      assert.match(result.said, /- Favorite Integer: 42/, "an optional field's default is sent");
    });

    await t.step("with no one to ask, the elicitation is declined", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "everything__trigger-elicitation-request",
        args: {},
      });
      assert.match(result.said, /declined/);
    });

    await t.step("a long-running tool is cancelled", async () => {
      const controller = new AbortController();
      const call = runTool(rt, {
        caller: "person",
        name: "everything__trigger-long-running-operation",
        args: { duration: 60, steps: 600 },
        signal: controller.signal,
        // Cancelled once it runs: at its first progress report, not after a guessed delay.
        progress: () => controller.abort(),
      });
      const result = await call;
      assert.equal(result.is_error, true);
      assert.match(result.said, /cancelled/);
      const after = await runTool(rt, {
        caller: "person",
        name: "everything__echo",
        args: { message: "still" },
      });
      assert.match(after.said, /Echo: still/);
    });
  } finally {
    await closeMcpServers();
  }
});

Deno.test("magi uses server-filesystem's tools", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "notes.txt"), "a line in a file\n");
  await using tr = await testRuntime({
    // The server's folder is a root (the system temp folder it lies in is none).
    cwd: dir.path,
    config: {
      shipped_tools: false,
      mcp_servers: {
        fs: denoServer(imports["@modelcontextprotocol/server-filesystem"], dir.path),
      },
    },
  });
  try {
    const result = await runTool(tr.rt, {
      caller: "person",
      name: "fs__read_text_file",
      args: { path: join(dir.path, "notes.txt") },
    });
    assert.equal(result.is_error, false, result.said);
    assert.match(result.said, /a line in a file/);
    const outside = await runTool(tr.rt, {
      caller: "person",
      name: "fs__read_text_file",
      args: { path: "/etc/hostname" },
    });
    assert.equal(outside.is_error, true);

    // read_media_file: its image crosses as an attachment and in structured content, never
    // as base64 in said; its title, annotations and outputSchema reach the registry.
    const png = new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...new Uint8Array(600),
    ]);
    await Deno.writeFile(join(dir.path, "dot.png"), png);
    const media = tr.rt.registry.get("fs__read_media_file")!;
    assert.equal(media.listing?.title, "Read Media File");
    assert.equal(media.listing?.annotations?.readOnlyHint, true);
    assert.equal(media.listing?.outputSchema?.type, "object");
    const image = await runTool(tr.rt, {
      caller: "person",
      name: "fs__read_media_file",
      args: { path: join(dir.path, "dot.png") },
    });
    assert.equal(image.is_error, false, image.said);
    assert.match(image.said, /^\[image image\/png, 608 bytes, saved to \S+\]\n$/);
    assert.ok(!/[A-Za-z0-9+/]{64}/.test(image.said), "no base64 in said");
    assert.equal(image.attachments?.length, 1);
    const block = image.attachments![0].block as { type: string; data: string; mimeType: string };
    assert.equal(block.type, "image");
    assert.equal(block.mimeType, "image/png");
    assert.equal(atob(block.data).length, 608);
    assert.ok(image.structured, "structured content passed on");
  } finally {
    await closeMcpServers();
  }
});

Deno.test("an MCP server's results are bounded, split, and survive its crash", async (t) => {
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      mcp_servers: { fixture: { ...FIXTURE, env: { FIXTURE_TOKEN: "${MY_API_TOKEN}" } } },
    },
    env: { MY_API_TOKEN: "s3cr3t-expanded-value" },
  });
  const { rt } = tr;
  try {
    await t.step("a 5 MB result is bounded and spilled", async () => {
      const result = await runTool(rt, { caller: "person", name: "fixture__big", args: {} });
      assert.equal(result.is_error, false);
      assert.ok(new TextEncoder().encode(result.said).length <= rt.limits.saidBytes + 512);
      assert.match(result.said, /the very end/);
      assert.ok(result.spill);
      const spilled = await Deno.stat(result.spill);
      assert.ok(spilled.size > 5_000_000);
    });

    await t.step("${NAME} in a server's env is expanded; the value comes back masked", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "fixture__env",
        args: { name: "FIXTURE_TOKEN" },
      });
      assert.equal(result.said.trim(), "value: $MY_API_TOKEN");
    });

    await t.step("content for the user only goes to shown", async () => {
      const result = await runTool(rt, { caller: "person", name: "fixture__split", args: {} });
      assert.match(result.said, /for the model/);
      assert.match(result.said, /for both/);
      assert.ok(!result.said.includes("for the person"));
      assert.match(result.shown, /for the person/);
      assert.match(result.shown, /for both/);
      assert.ok(!result.shown.includes("for the model"));
    });

    await t.step("a name the registry cannot take is mapped, and mapped back", async () => {
      const result = await runTool(rt, {
        caller: "person",
        name: "fixture__weird_name_x",
        args: {},
      });
      assert.match(result.said, /mapped back/);
    });

    await t.step(
      "a server dying mid-call is an error result; the next call restarts it",
      async () => {
        const before = await runTool(rt, { caller: "person", name: "fixture__pid", args: {} });
        const result = await runTool(rt, { caller: "person", name: "fixture__crash", args: {} });
        assert.equal(result.is_error, true);
        assert.match(result.said, /ended during the call/);
        assert.match(result.said, /exit status 7/);
        assert.match(result.said, /crashing on purpose/);
        const after = await runTool(rt, { caller: "person", name: "fixture__pid", args: {} });
        assert.equal(after.is_error, false);
        assert.notEqual(after.said.trim(), before.said.trim());
      },
    );
  } finally {
    await closeMcpServers();
  }
});

Deno.test("a server that cannot start costs only its tools, with one line", async () => {
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      mcp_servers: { broken: { command: "/nonexistent/mcp-server" }, fixture: FIXTURE },
    },
  });
  try {
    const lines = tr.warnings.filter((w) => w.includes("broken"));
    assert.equal(lines.length, 1, tr.warnings.join("\n"));
    assert.match(lines[0], /MCP server "broken" left out: cannot start/);
    assert.ok(tr.rt.registry.get("fixture__pid"));
    assert.ok(tr.rt.registry.get("read"));
  } finally {
    await closeMcpServers();
  }
});

Deno.test("a lazy server starts on its first call once its tools are cached", async () => {
  await using home = await tempDir();
  const pidFile = join(home.path, "pids");
  const env = { XDG_CACHE_HOME: join(home.path, "cache"), FIXTURE_PID_FILE: pidFile };
  const config = { shipped_tools: false, mcp_servers: { fixture: FIXTURE } };
  const starts = async () =>
    (await Deno.readTextFile(pidFile).catch(() => "")).trim().split("\n")
      .filter(Boolean).length;
  {
    await using _first = await testRuntime({ config, env });
    await closeMcpServers();
  }
  assert.equal(await starts(), 1, "nothing cached: started to list its tools");
  await using second = await testRuntime({ config, env });
  try {
    assert.ok(second.rt.registry.get("fixture__pid"));
    assert.equal(await starts(), 1, "cached: not started yet");
    const result = await runTool(second.rt, { caller: "person", name: "fixture__pid", args: {} });
    assert.equal(result.is_error, false);
    assert.equal(await starts(), 2);
  } finally {
    await closeMcpServers();
  }
});

Deno.test("magi ends the servers it started when it exits", async () => {
  await using home = await tempDir();
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    mcp_servers: { fixture: { ...FIXTURE, start: "eager" } },
  });
  const run = await magi(["call", "fixture__pid", "--config", config], { home: home.path });
  assert.equal(run.code, 0, run.stderr);
  const pid = Number(run.stdout.trim());
  assert.ok(pid > 0, run.stdout);
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(!alive(pid), "the server is gone");
});

Deno.test("magi ends the servers it started when it is terminated", async () => {
  await using home = await tempDir();
  const pidFile = join(home.path, "server.pid");
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    mcp_servers: {
      fixture: {
        ...FIXTURE,
        start: "eager",
        env: { FIXTURE_STAY: "1", FIXTURE_PID_FILE: pidFile },
      },
    },
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), join(REPO, "main.ts")]
      .concat(["mcp", "--config", config]),
    cwd: home.path,
    env: {
      XDG_CONFIG_HOME: join(home.path, "config"),
      XDG_CACHE_HOME: join(home.path, "cache"),
      XDG_STATE_HOME: join(home.path, "state"),
    },
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let pid = 0;
  try {
    while (!pid) {
      await new Promise((r) => setTimeout(r, 50));
      pid = Number(await Deno.readTextFile(pidFile).catch(() => "0"));
    }
    assert.ok(alive(pid));
    child.kill("SIGTERM");
    await child.status;
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!alive(pid), "the server is gone");
  } finally {
    // A server that outlived a failed run is ended here, not left behind.
    if (pid && alive(pid)) Deno.kill(pid, "SIGKILL");
    try {
      child.kill("SIGKILL");
    } catch {
      // magi has ended.
    }
    await child.status;
    await child.stdin.close().catch(() => {});
  }
});

Deno.test("magi reaches a Streamable HTTP server: another magi's tools as NAME__tool", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(join(home.path, "far.txt"), "from the other magi\n");
  const serverConfig = await writeConfig(home.path, { shipped_tools: false });
  const server = await startHttp(home.path, ["--config", serverConfig]);
  try {
    await using tr = await testRuntime({
      // The other magi's folder is a root here too (the system temp folder is none).
      cwd: home.path,
      config: {
        shipped_tools: false,
        mcp_servers: {
          far: {
            url: server.url,
            headers: { "X-Magi-Test": "${TEST_HEADER}", Authorization: "Bearer ${FAR_TOKEN}" },
          },
        },
      },
      env: { TEST_HEADER: "hello there", FAR_TOKEN: server.token! },
    });
    assert.equal(tr.rt.registry.get("far__read")?.origin.source, "mcp");
    const result = await runTool(tr.rt, {
      caller: "person",
      name: "far__read",
      args: { path: join(home.path, "far.txt") },
    });
    assert.equal(result.is_error, false, result.said);
    assert.match(result.said, /from the other magi/);
    // The serving magi's token file is magi's own state, hidden from tools as from the
    // sandbox; the token would be masked besides.
    const leak = await runTool(tr.rt, {
      caller: "person",
      name: "far__read",
      args: { path: tokenFile(home.path) },
    });
    assert.ok(!leak.said.includes(server.token!), leak.said);
    assert.equal(leak.is_error, true, leak.said);
    assert.match(leak.said, /magi's own files, hidden from tools/);
  } finally {
    await closeMcpServers();
    await server.stop();
  }
});
