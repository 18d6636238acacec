/**
 * Every content type crosses `magi mcp`: an upstream server's images, embedded resources and
 * structured content reach magi's own MCP client as such (masked), with the upstream tool's
 * title, annotations and outputSchema; its resources and prompts are served too — through
 * server-everything from npm.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { magiArgs, REPO, tempDir, writeConfig } from "../helpers.ts";
import { denoServer } from "./servers.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;
const EVERYTHING = denoServer(imports["@modelcontextprotocol/server-everything"], "stdio");

Deno.test("images, resources and structured content cross magi mcp", async (t) => {
  await using home = await tempDir();
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    mcp_servers: { everything: EVERYTHING },
    policy: { rules: [{ tool: "*", source: "mcp", decision: "allow" }] },
  });
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: magiArgs(["mcp", "--config", config]),
    cwd: home.path,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home.path,
      XDG_CONFIG_HOME: join(home.path, "config"),
      XDG_CACHE_HOME: join(home.path, "cache"),
      XDG_STATE_HOME: join(home.path, "state"),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "magi-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await t.step("title, annotations and outputSchema are served", async () => {
      const { tools } = await client.listTools();
      const structured = tools.find((tool) => tool.name === "everything__get-structured-content");
      assert.ok(structured?.outputSchema, JSON.stringify(structured));
      const echo = tools.find((tool) => tool.name === "everything__echo");
      assert.ok(echo);
      const annotated = tools.filter((tool) => tool.annotations || tool.title);
      assert.ok(annotated.length > 0, "some upstream tool has a title or annotations");
    });

    await t.step("an image arrives as an image block; said describes it", async () => {
      const result = await client.callTool({
        name: "everything__get-tiny-image",
        arguments: {},
      }) as CallToolResult;
      const image = result.content.find((c) => c.type === "image") as
        | { data: string; mimeType: string }
        | undefined;
      assert.ok(image, JSON.stringify(result.content).slice(0, 300));
      assert.equal(image.mimeType, "image/png");
      assert.equal(atob(image.data).slice(1, 4), "PNG");
      const texts = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
      assert.match(texts, /\[image image\/png, \d+ bytes, saved to /);
      assert.ok(!/[A-Za-z0-9+/]{200}/.test(texts), "no base64 in the text");
    });

    await t.step("an embedded resource arrives as a resource block", async () => {
      const result = await client.callTool({
        name: "everything__get-resource-reference",
        arguments: { resourceType: "Text", resourceId: 1 },
      }) as CallToolResult;
      assert.ok(result.content.some((c) => c.type === "resource"), JSON.stringify(result));
    });

    await t.step("structured content arrives as structuredContent", async () => {
      const result = await client.callTool({
        name: "everything__get-structured-content",
        arguments: { location: "Chicago" },
      }) as CallToolResult;
      assert.equal(typeof result.structuredContent?.temperature, "number");
    });

    await t.step("upstream resources are listed and read with their URIs", async () => {
      const { resources } = await client.listResources();
      const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/"));
      assert.ok(doc, JSON.stringify(resources).slice(0, 300));
      const { contents } = await client.readResource({ uri: doc.uri });
      assert.equal(contents[0].uri, doc.uri);
      assert.equal(typeof (contents[0] as { text?: unknown }).text, "string");
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(
        resourceTemplates.some((r) => r.uriTemplate.startsWith("demo://resource/dynamic/")),
      );
    });

    await t.step("upstream prompts are served as NAME__prompt", async () => {
      const { prompts } = await client.listPrompts();
      assert.ok(
        prompts.some((p) => p.name === "everything__simple-prompt"),
        JSON.stringify(prompts),
      );
      const got = await client.getPrompt({
        name: "everything__args-prompt",
        arguments: { city: "Lyon" },
      });
      assert.match(JSON.stringify(got.messages), /Lyon/);
    });

    await t.step("completion/complete is answered by the upstream server", async () => {
      assert.ok(client.getServerCapabilities()?.completions, "completions declared");
      const prompt = await client.complete({
        ref: { type: "ref/prompt", name: "everything__completable-prompt" },
        argument: { name: "name", value: "" },
        context: { arguments: { department: "Sales" } },
      });
      assert.deepEqual(prompt.completion.values, ["David", "Eve", "Frank"]);
      const { resourceTemplates } = await client.listResourceTemplates();
      const template = resourceTemplates.find((r) => r.uriTemplate.includes("{resourceId}"));
      assert.ok(template, JSON.stringify(resourceTemplates));
      const resource = await client.complete({
        ref: { type: "ref/resource", uri: template.uriTemplate },
        argument: { name: "resourceId", value: "1" },
      });
      assert.ok(resource.completion.values.includes("1"), JSON.stringify(resource));
      await assert.rejects(
        client.complete({
          ref: { type: "ref/prompt", name: "everything__nosuch" },
          argument: { name: "x", value: "" },
        }),
        /Unknown prompt "everything__nosuch"/,
      );
    });

    await t.step("an upstream server's progress reaches magi mcp's client", async () => {
      // Heard by token here: the SDK's own onprogress drops a report that arrives with the result.
      const seen: { progress: number; total?: number; message?: string }[] = [];
      client.setNotificationHandler(ProgressNotificationSchema, (n) => {
        if (n.params.progressToken === "p1") seen.push(n.params);
      });
      const result = await client.callTool({
        name: "everything__trigger-long-running-operation",
        arguments: { duration: 2, steps: 4 },
        _meta: { progressToken: "p1" },
      }) as CallToolResult;
      assert.match(JSON.stringify(result.content), /Long running operation completed/);
      const upstream = seen.filter((p) => p.total !== undefined);
      assert.equal(upstream.length, 4, JSON.stringify(seen));
      const end = upstream.at(-1)!;
      assert.equal(end.progress, end.total, "the last report is the whole");
      for (let i = 1; i < seen.length; i++) {
        assert.ok(
          seen[i].progress > seen[i - 1].progress,
          `progress grows: ${JSON.stringify(seen)}`,
        );
      }
    });

    await t.step("an upstream server's log messages reach magi mcp's client", async () => {
      const logged = Promise.withResolvers<{ logger?: string; data: unknown }>();
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logged.resolve(n.params);
      });
      await client.callTool({ name: "everything__toggle-simulated-logging", arguments: {} });
      const message = await logged.promise;
      assert.equal(message.logger, "everything");
      assert.match(String(message.data), /-level message|level-message/);
    });
  } finally {
    await client.close();
  }
});
