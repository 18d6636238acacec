/**
 * The door's table (SPEC S8.1): for each caller, verdict and session setting, the decision
 * and the sandbox mode. The door is pure, so the table is the whole of it.
 */
import assert from "node:assert/strict";
import { door, type DoorSettings, type Effects, settle } from "../../lib/policy/door.ts";
import type { Verdict } from "../../lib/policy/decide.ts";

const STARTS: Effects = { reads: [], writes: [], starts: ["ls"], network: false };
const FILES: Effects = { reads: [], writes: ["a.txt"], starts: [], network: false };
const OK: DoorSettings = { mode: "workspace-write", explicit: false, approval: "ask" };
const NO_SANDBOX: DoorSettings = { ...OK, problem: "bwrap is not on PATH" };

function verdict(decision: Verdict["decision"], origin?: string): Verdict {
  return {
    decision,
    rule: origin ? { id: "r", origin, decision } : null,
    reason: "because",
  };
}

Deno.test("the door's table: caller × verdict × session → decision and sandbox", () => {
  const cases: [string, Parameters<typeof door>[0], string, string][] = [
    [
      "default allow",
      {
        tool: "run",
        verdict: verdict("allow", "default"),
        effects: STARTS,
        caller: "model",
        settings: OK,
      },
      "allow",
      "read-only",
    ],
    [
      "own allow",
      {
        tool: "run",
        verdict: verdict("allow", "/home/a/config.jsonc"),
        effects: STARTS,
        caller: "model",
        settings: OK,
      },
      "allow",
      "workspace-write",
    ],
    [
      "ask",
      { tool: "run", verdict: verdict("ask"), effects: STARTS, caller: "mcp", settings: OK },
      "ask",
      "workspace-write",
    ],
    [
      "deny",
      {
        tool: "run",
        verdict: verdict("deny", "default"),
        effects: STARTS,
        caller: "model",
        settings: { ...OK, approval: "never" },
      },
      "deny",
      "read-only",
    ],
    [
      "session read-only caps",
      {
        tool: "run",
        verdict: verdict("ask"),
        effects: STARTS,
        caller: "model",
        settings: { ...OK, mode: "read-only" },
      },
      "ask",
      "read-only",
    ],
    [
      "session off",
      {
        tool: "run",
        verdict: verdict("allow", "default"),
        effects: STARTS,
        caller: "model",
        settings: { ...OK, mode: "off" },
      },
      "allow",
      "off",
    ],
    [
      "no sandbox: silent allow asked",
      {
        tool: "run",
        verdict: verdict("allow", "default"),
        effects: STARTS,
        caller: "model",
        settings: NO_SANDBOX,
      },
      "ask",
      "off",
    ],
    [
      "no sandbox: a file tool starts nothing",
      {
        tool: "write",
        verdict: verdict("allow", "default"),
        effects: FILES,
        caller: "model",
        settings: NO_SANDBOX,
      },
      "allow",
      "read-only",
    ],
    [
      "person, unconfigured",
      { tool: "run", verdict: verdict("ask"), effects: STARTS, caller: "person", settings: OK },
      "allow",
      "off",
    ],
    [
      "person, configured",
      {
        tool: "run",
        verdict: verdict("ask"),
        effects: STARTS,
        caller: "person",
        settings: { ...OK, explicit: true },
      },
      "allow",
      "workspace-write",
    ],
    [
      "person, project body",
      {
        tool: "run",
        verdict: verdict("ask"),
        effects: STARTS,
        caller: "person",
        settings: OK,
        project: true,
      },
      "ask",
      "workspace-write",
    ],
  ];
  for (const [name, call, decision, sandbox] of cases) {
    const ruling = door(call);
    assert.deepEqual([ruling.decision, ruling.sandbox], [decision, sandbox], name);
  }
});

Deno.test("settling: --auto approves an ask into workspace-write; a deny stays; no one to ask denies", async () => {
  const call = {
    tool: "run",
    verdict: verdict("ask"),
    effects: STARTS,
    caller: "model" as const,
    settings: { ...OK, approval: "never" as const },
  };
  const told: string[] = [];
  const ctx = { always: new Set<string>(), tell: (l: string) => told.push(l) };
  assert.deepEqual(await settle(ctx, call, door(call), "k"), {
    run: true,
    sandbox: "workspace-write",
    byPerson: true,
  });
  const denied = { ...call, verdict: verdict("deny", "/c.jsonc") };
  const d = await settle(ctx, denied, door(denied), "k2");
  assert.equal(d.run, false);
  assert.match(told.join("\n"), /refused run: deny by rule "r" \(\/c\.jsonc\).*refuses it/);
  const asking = { ...call, settings: OK };
  const n = await settle(ctx, asking, door(asking), "k3");
  assert.equal(n.run, false);
  assert.match((n as { refusal: string }).refusal, /no person to approve it/);
});
