import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/pipeline/run_tool.ts";
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
