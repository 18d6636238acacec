import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { TESTDATA, testRuntime } from "../helpers.ts";

const RESULTS = join(TESTDATA, "lua", "results");
const FILE = join(RESULTS, "results.lua");

function resultsRuntime() {
  return testRuntime({ config: { lua_dirs: [RESULTS], shipped_tools: false } });
}

Deno.test("run's allowed returns: a string, {said, shown}, numbers inside as text, is_error", async () => {
  await using t = await resultsRuntime();
  const call = (name: string) => runTool(t.rt, { name, args: {} });
  const text = await call("ret_string");
  assert.deepEqual([text.said, text.shown, text.is_error], ["plain text", "plain text", false]);
  const both = await call("ret_said_shown");
  assert.deepEqual([both.said, both.shown, both.is_error], [
    "for the model",
    "for the person",
    false,
  ]);
  const numbers = await call("ret_said_number");
  assert.deepEqual([numbers.said, numbers.shown, numbers.is_error], ["42", "1.5", false]);
  const failed = await call("ret_said_error");
  assert.deepEqual([failed.said, failed.is_error], ["it broke", true]);
});

Deno.test("run returning something else is one error line naming the tool and what it returned", async () => {
  await using t = await resultsRuntime();
  const forms = "return a string or {said=…, shown=…}";
  const cases: [string, string][] = [
    ["ret_function", `run of "ret_function" returned a function; ${forms}`],
    ["ret_list", `run of "ret_list" returned a table without said or ask; ${forms}`],
    ["ret_foo", `run of "ret_foo" returned a table without said or ask; ${forms}`],
    ["ret_number", `run of "ret_number" returned a number; ${forms}`],
    ["ret_true", `run of "ret_true" returned a boolean; ${forms}`],
    ["ret_nothing", `run of "ret_nothing" returned nothing; ${forms}`],
    ["ret_said_table", `run of "ret_said_table" returned said as a table; it must be a string`],
    [
      "ret_shown_function",
      `run of "ret_shown_function" returned shown as a function; it must be a string`,
    ],
    ["ret_ask_table", `run of "ret_ask_table" returned ask as a table; it must be a string`],
    [
      "ret_choice_table",
      `run of "ret_choice_table" returned choices[2] as a table; it must be a string`,
    ],
  ];
  for (const [name, message] of cases) {
    const r = await runTool(t.rt, { name, args: {} });
    assert.equal(r.is_error, true, `${name}: ${r.said}`);
    assert.match(r.said, /^\[magi: Lua error: [^\n]*\]\n?$/, name);
    assert.ok(r.said.startsWith(`[magi: Lua error: ${message}`), `${name}: ${r.said}`);
    assert.ok(r.said.includes(FILE), `${name} names its file: ${r.said}`);
    assert.ok(!/table: 0x|function: 0x|builtin: /.test(r.said), `${name}: ${r.said}`);
  }
  assert.equal((await runTool(t.rt, { name: "ret_string", args: {} })).said, "plain text");
});
