import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { type ApprovalRecord, onApproval } from "../../lib/policy/approvals.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const TOOLS = join(TESTDATA, "policy", "tools");

Deno.test("the approvals socket: the policy answers, a person approves or refuses, non-interactive refuses", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    toolsDirs: [TOOLS],
    config: {
      shipped_tools: false,
      policy: {
        rules: [
          { tool: "approval", fields: { ask: "Deploy to staging*" }, decision: "allow" },
          { tool: "approval", fields: { ask: "*production*" }, decision: "deny" },
        ],
      },
    },
  });
  assert.match(t.rt.context.MAGI_APPROVAL_SOCK ?? "", /approve\.sock$/);
  const records: ApprovalRecord[] = [];
  onApproval(t.rt.policy, (r) => records.push(r));
  const ask = async (words: string, answer?: "yes" | "no") => {
    const r = await runTool(t.rt, {
      name: "approve-me",
      args: { args: words.split(" ") },
      caller: "model",
      approve: answer ? () => Promise.resolve(answer) : undefined,
    });
    assert.equal(r.is_error, false, r.said);
    return r.said.trim();
  };
  assert.equal(await ask("Deploy to staging now"), "approved");
  assert.match(await ask("Wipe production", "yes"), /^refused: deny by rule "rule 2"/);
  assert.equal(await ask("Rotate the keys", "yes"), "approved");
  assert.equal(await ask("Rotate the keys", "no"), "refused: refused by the person");
  assert.match(await ask("Rotate the keys"), /^refused: no person to ask \(non-interactive\)/);
  assert.deepEqual(records.map((r) => [r.ask, r.approved, r.by]), [
    ["Deploy to staging now", true, "policy"],
    ["Wipe production", false, "policy"],
    ["Rotate the keys", true, "person"],
    ["Rotate the keys", false, "person"],
    ["Rotate the keys", false, "no person"],
  ]);
});

Deno.test("under --auto (approval never) the approvals socket approves no escalation: a rule or a person must", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    toolsDirs: [TOOLS],
    config: {
      shipped_tools: false,
      approval: "never",
      sandbox: { mode: "off" },
      policy: {
        rules: [
          { tool: "approve-me", decision: "allow" },
          { tool: "approval", fields: { ask: "Deploy to staging*" }, decision: "allow" },
        ],
      },
    },
  });
  const records: ApprovalRecord[] = [];
  onApproval(t.rt.policy, (r) => records.push(r));
  const ask = async (words: string, answer?: "yes") => {
    const r = await runTool(t.rt, {
      name: "approve-me",
      args: { args: words.split(" ") },
      caller: "model",
      approve: answer ? () => Promise.resolve(answer) : undefined,
    });
    assert.equal(r.is_error, false, r.said);
    return r.said.trim();
  };
  assert.equal(await ask("Deploy to staging now"), "approved");
  assert.match(
    await ask("Push to production"),
    /^refused: no person to ask: --auto approves no escalation/,
  );
  assert.equal(await ask("Push to production", "yes"), "approved");
  assert.deepEqual(records.map((r) => [r.ask, r.approved, r.by]), [
    ["Deploy to staging now", true, "policy"],
    ["Push to production", false, "no person"],
    ["Push to production", true, "person"],
  ]);
});

Deno.test("each request is bound to its own call: concurrent calls get their own approver's answer", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    toolsDirs: [TOOLS],
    config: { shipped_tools: false },
  });
  // Both calls run (and both approvers are lent) before either answers.
  let asks = 0;
  let bothAsked!: () => void;
  const both = new Promise<void>((resolve) => bothAsked = resolve);
  const answering = (answer: "yes" | "no") => async () => {
    if (++asks === 2) bothAsked();
    await both;
    return answer;
  };
  const call = (words: string, answer: "yes" | "no") =>
    runTool(t.rt, {
      name: "approve-me",
      args: { args: words.split(" ") },
      caller: "model",
      approve: answering(answer),
    });
  const [yes, no] = await Promise.all([call("Tag v1", "yes"), call("Tag v2", "no")]);
  assert.equal(yes.said.trim(), "approved");
  assert.equal(no.said.trim(), "refused: refused by the person");
});

Deno.test("a request without its call's token, or with one of no running call, is refused", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    toolsDirs: [TOOLS],
    config: {
      shipped_tools: false,
      sandbox: { mode: "off" },
      policy: { rules: [{ tool: "approval", decision: "allow" }] },
    },
  });
  const records: ApprovalRecord[] = [];
  onApproval(t.rt.policy, (r) => records.push(r));
  const ask = async (args: string[]) => {
    const r = await runTool(t.rt, {
      name: "approve-me",
      args: { args },
      caller: "model",
      approve: () => Promise.resolve("yes"),
    });
    assert.equal(r.is_error, false, r.said);
    return r.said.trim();
  };
  // Even a request a rule allows needs the token of the call it comes from.
  assert.match(
    await ask(["--no-token", "Deploy"]),
    /^refused: the request carries no "token": send the value of \$MAGI_APPROVAL_TOKEN/,
  );
  assert.match(
    await ask(["--token=guessed", "Deploy"]),
    /^refused: the request's "token" is not a running call's/,
  );
  assert.equal(await ask(["Deploy"]), "approved");
  assert.deepEqual(records.map((r) => [r.approved, r.by]), [
    [false, "no call"],
    [false, "no call"],
    [true, "policy"],
  ]);
  // The token a call is given is masked in what it says, and is good only while it runs.
  const shown = await runTool(t.rt, {
    name: "run",
    args: { command: "printenv MAGI_APPROVAL_TOKEN" },
    caller: "person",
  });
  assert.match(shown.said.trim(), /^\$MAGI_APPROVAL_TOKEN\.[A-Za-z0-9_-]{24}$/);
  const kept = join(dir.path, "token");
  await runTool(t.rt, {
    name: "run",
    args: { command: `printenv MAGI_APPROVAL_TOKEN > ${kept}` },
    caller: "person",
  });
  const stale = (await Deno.readTextFile(kept)).trim();
  assert.match(stale, /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{24}$/);
  assert.match(
    await ask([`--token=${stale}`, "Deploy"]),
    /^refused: the request's "token" is not a running call's/,
  );
});
