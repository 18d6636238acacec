/**
 * A Worker that may read only magi's checkout (tests/policy/pure_decision_test.ts): it rebuilds the
 * policy from plain data and decides calls from the facts it is handed, so any file-system,
 * PATH or environment look-up inside the decision would be refused by Deno.
 */
import { decide, loadPolicy } from "../../lib/policy/decide.ts";
import { fromFacts, type FsFacts } from "../../lib/policy/fs_facts.ts";
import type { CallFacts } from "../../lib/policy/decide.ts";

interface Job {
  roots: string[];
  env: Record<string, string>;
  calls: { call: CallFacts; facts: FsFacts }[];
}

const self = globalThis as unknown as {
  onmessage: (e: MessageEvent<Job>) => void;
  postMessage: (m: unknown) => void;
};
self.onmessage = (e) => {
  const { roots, env, calls } = e.data;
  try {
    const policy = loadPolicy(undefined, "test", roots, env);
    const out = calls.map(({ call, facts }) => decide(policy, call, fromFacts(facts)));
    self.postMessage({ verdicts: out });
  } catch (error) {
    self.postMessage({ error: String((error as Error).stack ?? error) });
  }
};
