/**
 * `magi mcp` over stdio, driven by the MCP SDK's own client: list, call, error results,
 * protocol errors, progress, cancellation and `notifications/tools/list_changed`.
 */
import { alive } from "../process/helpers.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  ElicitRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { pidsWith } from "../process/helpers.ts";
import { magiArgs, makeTool, REPO, tempDir, TESTDATA, writeConfig } from "../helpers.ts";

const FIXTURE_SERVER = join(TESTDATA, "mcp", "fixture_server.ts");

function help(summary: string, usage: string): string {
  return `if [ "$1" = "--help" ]; then echo "${summary}"; echo "${usage}"; exit 0; fi\n`;
}

async function makeTools(dir: string): Promise<void> {
  await makeTool(
    dir,
    "slow",
    "#!/bin/sh\n" + help("Sleeps, then says done", "Usage: slow SECONDS [PIDFILE]") +
      '[ -n "$2" ] && echo $$ > "$2"\nsleep "$1"\necho done\n',
  );
  await makeTool(
    dir,
    "fail",
    "#!/bin/sh\n" + help("Always fails", "Usage: fail") +
      'echo "half of it"\necho "something broke" >&2\nexit 3\n',
  );
  await makeTool(
    dir,
    "asker",
    "#!/bin/sh\n" + help("Asks for a colour", "Usage: asker") +
      'if [ -z "${MAGI_ANSWERED+x}" ]; then\n' +
      '  echo \'{"ask": "Which colour?", "choices": ["red", "blue"]}\' >"$MAGI_ASK"; exit 0\n' +
      'fi\necho "colour: $MAGI_ANSWERED"\n',
  );
  await makeTool(
    dir,
    "big",
    "#!/bin/sh\n" + help("Prints many lines", "Usage: big") +
      'i=0; while [ $i -lt 400 ]; do echo "line $i of the big output"; i=$((i+1)); done\n',
  );
}

async function connect(home: string, tools: string, config: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: magiArgs(["mcp", "--config", config, "--tools-dir", tools]),
    cwd: home,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "magi-test", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  await client.connect(transport);
  return client;
}

function texts(result: CallToolResult): { text: string; audience?: string[] }[] {
  return result.content.map((c) => {
    assert.equal(c.type, "text");
    const block = c as { text: string; annotations?: { audience?: string[] } };
    return { text: block.text, audience: block.annotations?.audience };
  });
}

Deno.test("magi mcp serves the registry to the SDK client over stdio", async (t) => {
  await using home = await tempDir();
  const tools = join(home.path, "tools");
  await makeTools(tools);
  // The person's own Lua folder (a project's .magi/tools would be asked about).
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    limits: { said_bytes: 1024 },
    lua_dirs: [join(home.path, "lua")],
    // The fixture tools write files: the person's own rule runs them in workspace-write.
    policy: { rules: [{ tool: "*", source: "tools_dir", decision: "allow" }] },
  });
  await Deno.writeTextFile(join(home.path, "notes.txt"), "hello from a file\n");
  await Deno.mkdir(join(home.path, "lua"), { recursive: true });
  const client = await connect(home.path, tools, config);
  try {
    await t.step("tools/list gives declarations and annotations", async () => {
      const { tools: listed } = await client.listTools();
      const names = listed.map((tool) => tool.name);
      for (const name of ["asker", "big", "fail", "read", "slow"]) {
        assert.ok(names.includes(name), name);
      }
      const read = listed.find((tool) => tool.name === "read")!;
      assert.equal(read.annotations?.readOnlyHint, true);
      assert.equal(read.inputSchema.type, "object");
      assert.ok(!JSON.stringify(read.inputSchema).includes("x-magi"));
      const slow = listed.find((tool) => tool.name === "slow")!;
      assert.match(slow.description ?? "", /Sleeps, then says done/);
      assert.equal(slow.annotations, undefined);
      // No MCP server is reached, so nothing could complete a prompt or template.
      assert.equal(client.getServerCapabilities()?.completions, undefined);
    });

    await t.step("tools/call runs a builtin through the pipeline", async () => {
      const result = await client.callTool({
        name: "read",
        arguments: { path: join(home.path, "notes.txt") },
      }) as CallToolResult;
      assert.notEqual(result.isError, true);
      const [first] = texts(result);
      assert.match(first.text, /hello from a file/);
    });

    await t.step("the content is said alone; shown travels in _meta", async () => {
      const result = await client.callTool({ name: "big", arguments: {} }) as CallToolResult;
      const blocks = texts(result);
      assert.equal(blocks.length, 1);
      assert.equal(blocks[0].audience, undefined);
      // A host that joins every text block (as Claude Code does) reads exactly said.
      const joined = blocks.map((b) => b.text).join("\n");
      assert.match(joined, /line 0 of/);
      assert.match(joined, /line 399 of/);
      assert.ok(!joined.includes("line 200 of"), "the model's text is cut");
      const shown = (result._meta as Record<string, unknown>)["magi/shown"];
      assert.equal(typeof shown, "string");
      assert.match(shown as string, /line 200 of/);
    });

    await t.step("a failing tool is an isError result, not a protocol error", async () => {
      const result = await client.callTool({ name: "fail", arguments: {} }) as CallToolResult;
      assert.equal(result.isError, true);
      const text = texts(result).map((b) => b.text).join("\n");
      assert.match(text, /half of it/);
      assert.match(text, /exit status 3/);
      assert.match(text, /something broke/);
    });

    await t.step("bad arguments are an isError result naming the field", async () => {
      const result = await client.callTool({ name: "read", arguments: {} }) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(texts(result)[0].text, /path/);
    });

    await t.step("an unknown tool is a JSON-RPC error", async () => {
      await assert.rejects(
        client.callTool({ name: "no-such-tool", arguments: {} }),
        (error: unknown) =>
          error instanceof McpError &&
          error.message === 'MCP error -32602: Unknown tool "no-such-tool"',
      );
    });

    await t.step("a call running over a second sends progress", async () => {
      const seen: { progress: number; message?: string }[] = [];
      const result = await client.callTool(
        { name: "slow", arguments: { args: ["2.5"] } },
        undefined,
        { onprogress: (p) => void seen.push(p) },
      ) as CallToolResult;
      assert.match(texts(result)[0].text, /done/);
      assert.ok(seen.length >= 1, "at least one progress notification");
      assert.match(seen[0].message ?? "", /running/);
    });

    await t.step("cancelling a call ends the tool's process", async () => {
      // Not at HOME's top level (the test's folder is HOME): a sandboxed program makes no new
      // entry there.
      await Deno.mkdir(join(home.path, "run"), { recursive: true });
      const pidFile = join(home.path, "run", "slow.pid");
      const controller = new AbortController();
      const call = client.callTool(
        { name: "slow", arguments: { args: ["60", pidFile] } },
        undefined,
        { signal: controller.signal },
      );
      let pid = 0;
      while (!pid) {
        await new Promise((r) => setTimeout(r, 50));
        pid = Number(await Deno.readTextFile(pidFile).catch(() => "0"));
      }
      // In the sandbox's PID namespace the pid written is not the one here.
      const running = pidsWith(pidFile);
      assert.ok(running.length > 0, "the tool's process was not found");
      controller.abort("the person changed their mind");
      await assert.rejects(call);
      const any = () => running.some(alive);
      for (let i = 0; i < 200 && any(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!any(), "the tool's process is gone");
    });

    await t.step("a tool's question becomes elicitation/create", async () => {
      const asked: unknown[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params);
        return { action: "accept", content: { answer: "blue" } };
      });
      const result = await client.callTool({ name: "asker", arguments: {} }) as CallToolResult;
      assert.notEqual(result.isError, true);
      assert.match(texts(result)[0].text, /colour: blue/);
      assert.equal(asked.length, 1);
      const params = asked[0] as { message: string; requestedSchema: Record<string, unknown> };
      assert.equal(params.message, "Which colour?");
      assert.deepEqual(
        (params.requestedSchema.properties as Record<string, { enum?: string[] }>).answer.enum,
        ["red", "blue"],
      );
    });

    await t.step("a declined question ends the call as an error result", async () => {
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
      const result = await client.callTool({ name: "asker", arguments: {} }) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(texts(result)[0].text, /declined the question "Which colour\?"/);
    });

    await t.step("a call the policy asks about is put to the person", async () => {
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: "accept", content: { answer: "yes" } };
      });
      const path = join(home.path, "written.txt");
      const result = await client.callTool({
        name: "write",
        arguments: { path, content: "approved\n" },
      }) as CallToolResult;
      assert.notEqual(result.isError, true, texts(result)[0].text);
      assert.equal(await Deno.readTextFile(path), "approved\n");
      assert.match(asked[0], /^Allow "write"\?/);

      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
      const denied = await client.callTool({
        name: "write",
        arguments: { path, content: "refused\n" },
      }) as CallToolResult;
      assert.equal(denied.isError, true);
      assert.match(texts(denied)[0].text, /refused by the person/);
      assert.equal(await Deno.readTextFile(path), "approved\n");
    });

    await t.step("a new tool in tools_dir is announced with list_changed", async () => {
      const changed = Promise.withResolvers<void>();
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
      await makeTool(
        tools,
        "fresh",
        "#!/bin/sh\n" + help("A tool added while serving", "Usage: fresh") + "echo fresh\n",
      );
      await changed.promise;
      const { tools: listed } = await client.listTools();
      assert.ok(listed.some((tool) => tool.name === "fresh"));
    });

    await t.step("a new Lua declaration is announced with list_changed", async () => {
      const changed = Promise.withResolvers<void>();
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
      await Deno.writeTextFile(
        join(home.path, "lua", "greet.lua"),
        'magi.tool("greet_lua", { description = "Says hello", run = function(args) return "hello" end })\n',
      );
      await changed.promise;
      const result = await client.callTool({ name: "greet_lua", arguments: {} }) as CallToolResult;
      assert.match(texts(result)[0].text, /hello/);
    });
  } finally {
    await client.close();
  }
});

Deno.test("with mcp.audience_pair, said and shown are two blocks marked by audience", async () => {
  await using home = await tempDir();
  const tools = join(home.path, "tools");
  await makeTools(tools);
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    limits: { said_bytes: 1024 },
    mcp: { audience_pair: true },
    policy: { rules: [{ tool: "*", source: "tools_dir", decision: "allow" }] },
  });
  const client = await connect(home.path, tools, config);
  try {
    const result = await client.callTool({ name: "big", arguments: {} }) as CallToolResult;
    const blocks = texts(result);
    assert.equal(blocks.length, 2);
    assert.deepEqual(blocks[0].audience, ["assistant"]);
    assert.deepEqual(blocks[1].audience, ["user"]);
    assert.ok(!blocks[0].text.includes("line 200 of"), "the model's text is cut");
    assert.match(blocks[1].text, /line 200 of/);
    assert.equal(result._meta?.["magi/shown"], undefined);
  } finally {
    await client.close();
  }
});

Deno.test("a tool list change from an MCP server magi reaches is passed on", async () => {
  await using home = await tempDir();
  const tools = join(home.path, "tools");
  await Deno.mkdir(tools);
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    mcp_servers: {
      fixture: {
        command: Deno.execPath(),
        args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), FIXTURE_SERVER],
      },
    },
    policy: { rules: [{ tool: "*", source: "mcp", decision: "allow" }] },
  });
  const client = await connect(home.path, tools, config);
  try {
    const before = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(before.includes("fixture__grow"));
    assert.ok(!before.includes("fixture__extra"));
    const changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    await client.callTool({ name: "fixture__grow", arguments: {} });
    await changed.promise;
    const after = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(after.includes("fixture__extra"));
    const result = await client.callTool({
      name: "fixture__extra",
      arguments: {},
    }) as CallToolResult;
    assert.match(texts(result)[0].text, /extra here/);
  } finally {
    await client.close();
  }
});
