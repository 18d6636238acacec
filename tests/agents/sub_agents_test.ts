import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, makeTool, tempDir } from "../helpers.ts";
import { type Received, reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig, makeTools, script } from "../agent/setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

type Json = Record<string, unknown>;

function messagesOf(r: Received): Json[] {
  return (r.json.messages ?? []) as Json[];
}
function systemOf(r: Received): string {
  return String(messagesOf(r).find((m) => m.role === "system")?.content ?? "");
}
function toolNames(r: Received): string[] {
  return ((r.json.tools ?? []) as Json[]).map((t) => (t.function as Json).name as string).sort();
}
function firstUser(r: Received): string {
  return String(messagesOf(r).find((m) => m.role === "user")?.content ?? "");
}

function events(dir: string): Json[] {
  return Deno.readTextFileSync(join(dir, "transcript.jsonl")).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
}

/** A tool that leaves its parent mail in the documented format, from the shell. */
const POST = `d="$MAGI_MAIL_DIR/$MAGI_PARENT"; n="$(date +%s%N)-post"
printf '{"v":1,"from":"%s","to":"%s","text":"%s"}' "$MAGI_SESSION" "$MAGI_PARENT" "$*" > "$d/.$n.tmp"
mv "$d/.$n.tmp" "$d/$n.json" && echo posted`;

Deno.test("magi run: two sub-agents in one message run in parallel, linked, and their mail reaches the parent", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await makeTool(tools, "post", script("post — mail the parent", "post <words>...", POST));
  const work = join(dir.path, "work");
  await Deno.mkdir(join(work, ".git"), { recursive: true });
  await Deno.mkdir(join(work, ".magi", "agents"), { recursive: true });
  await Deno.writeTextFile(
    join(work, ".magi", "agents", "counter.md"),
    "---\nname: counter\ndescription: Counts things.\ntools: touch-file, post\n---\n" +
      "Count carefully and say the number.\n",
  );
  const server = scriptedServer("openai", (_i, r) => {
    const system = systemOf(r);
    const results = messagesOf(r).filter((m) => m.role === "tool").length;
    if (!system.includes("You are a sub-agent of session")) {
      if (results === 0) {
        return reply("openai", "Delegating.", [
          { id: "a1", name: "agent", args: { task: "count the apples" } },
          { id: "a2", name: "agent", args: { task: "count the pears", profile: "counter" } },
        ]);
      }
      return reply("openai", "Apples 3, pears 5.");
    }
    if (firstUser(r).includes("apples")) {
      // wait-for finishes only once the pears agent has made the flag: both run at once.
      return results === 0
        ? reply("openai", "", [
          { id: "w", name: "wait-for", args: { args: ["flag"] } },
          { id: "m", name: "mail", args: { text: "apples: counting" } },
        ])
        : reply("openai", "There are 3 apples.");
    }
    return results === 0
      ? reply("openai", "", [
        { id: "t", name: "touch-file", args: { args: ["flag"] } },
        { id: "p", name: "post", args: { args: ["pears", "found"] } },
      ])
      : reply("openai", "There are 5 pears.");
  });
  await using _server = server;
  const config = await agentConfig(dir.path, "openai", server.url, { agents: { max_depth: 1 } });
  const run = await magi(["run", "count the fruit", "--config", config, "--tools-dir", tools], {
    cwd: work,
    env: ENV,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /Apples 3, pears 5\./);

  const sessions = [...Deno.readDirSync(join(dir.path, "sessions"))].map((e) =>
    join(dir.path, "sessions", e.name)
  );
  assert.equal(sessions.length, 3);
  const parent = sessions.find((s) => !("parent" in events(s)[0]))!;
  const parentId = parent.split("/").at(-1)!;
  const children = sessions.filter((s) => s !== parent);
  for (const c of children) assert.equal(events(c)[0].parent, parentId);
  const childOf = (word: string) =>
    children.find((c) => events(c).some((e) => e.type === "user" && String(e.text).includes(word)))!
      .split("/").at(-1)!;
  const apples = childOf("apples");
  const pears = childOf("pears");
  // The apples agent saw the flag the pears agent made while it waited: they ran at once.
  const waited = events(join(dir.path, "sessions", apples)).find((e) => e.id === "w")!;
  assert.equal(waited.said, "saw flag\n");

  // Tools: the parent has `agent`; at max_depth 1 the children have none; the profile's
  // child has only what it names (and `mail`).
  const requests = server.requests;
  assert.ok(toolNames(requests[0]).includes("agent"));
  assert.match(
    JSON.stringify(requests[0].json.tools),
    /A named profile: counter \(Counts things\.\)/,
  );
  const pearsFirst = requests.find((r) => firstUser(r).includes("pears"))!;
  assert.deepEqual(toolNames(pearsFirst), ["mail", "post", "touch-file"]);
  assert.match(systemOf(pearsFirst), /Count carefully and say the number\./);
  const applesFirst = requests.find((r) => firstUser(r).includes("apples"))!;
  assert.ok(!toolNames(applesFirst).includes("agent"));

  // Both summaries come back, bounded, with the child's session named.
  const last = requests.at(-1)!;
  const results = toolResultsIn("openai", last);
  assert.deepEqual(results.map((r) => r.id), ["a1", "a2"]);
  assert.match(results[0].content, /^There are 3 apples\.\n\[magi: sub-agent session /);
  assert.ok(results[0].content.includes(apples));
  assert.match(results[1].content, /^There are 5 pears\.\n/);
  assert.match(results[1].content, /2 tool calls; 20 input and 10 output tokens/);

  // The mail — from the `mail` tool and from a tool writing the documented format — is read
  // at the parent's next turn and recorded in its session.
  const userTexts = messagesOf(last).filter((m) => m.role === "user").map((m) => m.content);
  assert.ok(
    userTexts.includes(
      `[mail from ${apples} — a sub-agent or a tool, not the person]\napples: counting`,
    ),
    userTexts.join("|"),
  );
  assert.ok(
    userTexts.includes(`[mail from ${pears} — a sub-agent or a tool, not the person]\npears found`),
    userTexts.join("|"),
  );
  const recorded = events(parent);
  assert.deepEqual(
    recorded.filter((e) => e.from).map((e) => e.from).sort(),
    [apples, pears].sort(),
  );
  // Linked both ways; the children's tokens count in the parent's session.
  const subs = recorded.filter((e) => e.type === "sub_agent");
  assert.deepEqual(subs.map((e) => e.id).sort(), [apples, pears].sort());
  assert.deepEqual(subs.map((e) => e.input_tokens), [20, 20]);
  // The names taken are kept in the session's own folder; the mailbox is left as it was.
  assert.equal(
    Deno.readTextFileSync(join(parent, "mail-read", parentId)).trim().split("\n").length,
    2,
  );
});

Deno.test("magi run: a profile that names a tool the parent lacks is refused with a clear line", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".git"));
  const agents = join(dir.path, "home", "config", "magi", "agents");
  await Deno.mkdir(agents, { recursive: true });
  await Deno.writeTextFile(
    join(agents, "deployer.md"),
    "---\nname: deployer\ndescription: Deploys.\ntools: [read, deploy-prod]\n---\nDeploy.\n",
  );
  await using server = scriptedServer("openai", [
    reply("openai", "", [{
      id: "a",
      name: "agent",
      args: { task: "ship it", profile: "deployer" },
    }]),
    reply("openai", "I could not start it."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(["run", "deploy", "--config", config], {
    cwd: dir.path,
    env: ENV,
    home: join(dir.path, "home"),
  });
  assert.equal(run.code, 0, run.stderr);
  const [result] = toolResultsIn("openai", server.requests[1]);
  assert.equal(
    result.content,
    `[magi: profile "deployer" (${join(agents, "deployer.md")}) names the tool "deploy-prod", ` +
      "which this agent does not have: a sub-agent's tools are a subset of its parent's]\n",
  );
  // No child session was started.
  assert.equal([...Deno.readDirSync(join(dir.path, "sessions"))].length, 1);
});

Deno.test("magi run: a flood of mail adds at most limits.said_bytes to one turn; the rest waits, counted", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  // 300 messages of 16,000 bytes each, in the documented format, written from the shell.
  const FLOOD = `d="$MAGI_MAIL_DIR/$MAGI_PARENT"; big=$(head -c 16000 /dev/zero | tr '\\0' x)
i=0; while [ $i -lt 300 ]; do i=$((i+1)); n="$(printf %06d $i)-flood"
printf '{"v":1,"from":"%s","to":"%s","text":"%s %s"}' "$MAGI_SESSION" "$MAGI_PARENT" "mail-$i" "$big" > "$d/.$n.tmp"
mv "$d/.$n.tmp" "$d/$n.json"; done; echo flooded`;
  await makeTool(tools, "flood", script("flood — mail the parent a lot", "flood", FLOOD));
  const work = join(dir.path, "work");
  await Deno.mkdir(join(work, ".git"), { recursive: true });
  const server = scriptedServer("openai", (_i, r) => {
    const results = messagesOf(r).filter((m) => m.role === "tool").length;
    if (systemOf(r).includes("You are a sub-agent of session")) {
      return results === 0
        ? reply("openai", "", [{ id: "f", name: "flood", args: {} }])
        : reply("openai", "Flooded.");
    }
    if (results === 0) {
      return reply("openai", "", [{ id: "a", name: "agent", args: { task: "flood" } }]);
    }
    if (results === 1) {
      return reply("openai", "", [{ id: "t", name: "touch-file", args: { args: ["x"] } }]);
    }
    return reply("openai", "Done.");
  });
  await using _server = server;
  const config = await agentConfig(dir.path, "openai", server.url, { agents: { max_depth: 1 } });
  const run = await magi(["run", "go", "--config", config, "--tools-dir", tools], {
    cwd: work,
    env: ENV,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /Done\./);
  const parentRequests = server.requests.filter((r) =>
    !systemOf(r).includes("You are a sub-agent of session")
  );
  assert.equal(parentRequests.length, 3);
  // The first request is the baseline; each later one adds at most one turn's bound of mail.
  const base = parentRequests[0].body.length;
  for (const r of parentRequests.slice(1)) {
    assert.ok(r.body.length < base + 2 * 16384 + 8192, `request of ${r.body.length} bytes`);
  }
  const mailIn = (r: Received) =>
    messagesOf(r).filter((m) => m.role === "user" && String(m.content).startsWith("[mail from"))
      .map((m) => String(m.content));
  const first = mailIn(parentRequests[1]);
  assert.equal(first.length, 1, "one 16,000-byte message fits the 16 KiB bound");
  assert.match(first[0], /mail-1 x/);
  assert.match(
    first[0],
    /\[magi: 299 more messages wait in the mailbox ".*": this turn's mail is bound to 16384 bytes; they are delivered at the next turns\]$/,
  );
  // The next turn takes the next one.
  const second = mailIn(parentRequests[2]);
  assert.equal(second.length, 2);
  assert.match(second[1], /mail-2 x/);
  assert.match(second[1], /298 more messages wait/);
});
