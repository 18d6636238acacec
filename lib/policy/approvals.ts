/**
 * The approvals socket (SPEC S5.2 `MAGI_APPROVAL_SOCK`, S8.1): a Unix socket per runtime
 * where a running tool asks the person to approve something. Newline-delimited JSON: the
 * tool writes `{"ask": "…"}` (and may add `"tool": NAME`), magi answers
 * `{"approved": true|false}` (with `"reason"` when it is refused), one answer per request,
 * in order, on the same connection.
 *
 * The policy answers first: the request is judged as a call of the pseudo-tool `approval`
 * with the fields `ask` and `tool`, so a rule such as
 * `{"tool": "approval", "fields": {"ask": "Deploy to staging*"}, "decision": "allow"}`
 * approves it. When the policy says `ask`, the person is asked if a call running now has an
 * approver (a terminal); otherwise — non-interactive, and under `--auto` too, which approves
 * no escalation — the answer is no. Every request and
 * answer is given to the listeners added with {@link onApproval} (the session records them).
 *
 * @module
 */
import { type Policy, verdictLine } from "./decide.ts";
import { type Approver, door, type DoorCall, settle } from "./door.ts";
import { NONE } from "./effects.ts";
import { judge, sessionSettings } from "./facts.ts";
import { answerJsonLines, serveUnixSocket } from "../process/unix_socket.ts";

/** One request and its answer. */
export interface ApprovalRecord {
  ask: string;
  tool?: string;
  approved: boolean;
  /** Who answered: "policy", "person" or "no person". */
  by: string;
  reason: string;
}

interface Server {
  path: string;
  approvers: Set<Approver>;
  listeners: ((r: ApprovalRecord) => void)[];
}

const servers = new WeakMap<Policy, Server>();

/**
 * Starts the approvals socket of a runtime (once per policy) and returns its path. The
 * listener does not keep magi alive; the socket's folder is removed when magi exits.
 */
export function serveApprovals(policy: Policy): string {
  const found = servers.get(policy);
  if (found) return found.path;
  const server: Server = { path: "", approvers: new Set(), listeners: [] };
  server.path = serveUnixSocket(
    "magi-approve-",
    "approve.sock",
    (conn) => serveConnection(policy, server, conn),
  );
  servers.set(policy, server);
  return server.path;
}

/** Adds a listener told of every request and answer. */
export function onApproval(policy: Policy, listener: (r: ApprovalRecord) => void): void {
  servers.get(policy)?.listeners.push(listener);
}

/**
 * Makes an approver available to the socket while a call runs; returns the function that
 * takes it away again.
 */
export function lendApprover(policy: Policy, approver: Approver | undefined): () => void {
  const server = servers.get(policy);
  if (!server || !approver) return () => {};
  server.approvers.add(approver);
  return () => server.approvers.delete(approver);
}

function serveConnection(policy: Policy, server: Server, conn: Deno.Conn): Promise<void> {
  return answerJsonLines(conn, (line) => answerLine(policy, server, line));
}

async function answerLine(
  policy: Policy,
  server: Server,
  line: string,
): Promise<{ approved: boolean; reason?: string }> {
  let request: { ask?: unknown; tool?: unknown };
  try {
    request = JSON.parse(line);
  } catch {
    return { approved: false, reason: "the request is not JSON" };
  }
  if (typeof request?.ask !== "string" || request.ask === "") {
    return { approved: false, reason: 'the request needs "ask": a non-empty string' };
  }
  const ask = request.ask;
  const tool = typeof request.tool === "string" ? request.tool : undefined;
  // The request passes the door as a call of the pseudo-tool `approval`.
  const verdict = judge(policy, {
    tool: "approval",
    source: "magi",
    args: tool ? { ask, tool } : { ask },
    cwd: policy.roots[0] ?? "/",
  });
  const call: DoorCall = {
    tool: tool ?? "approval",
    verdict: { ...verdict, reason: verdict.decision === "ask" ? ask : verdict.reason },
    effects: NONE,
    caller: "model",
    settings: sessionSettings(policy),
    // A tool asking for more than its call was given: `--auto` does not grant it.
    escalation: true,
  };
  const ruling = door(call);
  const approver = [...server.approvers].at(-1);
  const by = ruling.decision === "ask" ? (approver ? "person" : "no person") : "policy";
  const settled = await settle(
    { approve: approver, always: new Set() },
    call,
    ruling,
    "approval " + ask,
  );
  const approved = settled.run;
  let reason = verdictLine(verdict);
  if (ruling.decision === "ask") {
    if (by === "person") {
      reason = approved ? "approved by the person" : "refused by the person";
    } else if (call.settings.approval === "never") {
      reason = "no person to ask: --auto approves no escalation (a rule such as " +
        '{"tool": "approval", "fields": {"ask": "…"}, "decision": "allow"} would): refused';
    } else reason = "no person to ask (non-interactive): refused";
  }
  const record: ApprovalRecord = { ask, ...(tool ? { tool } : {}), approved, by, reason };
  for (const listener of server.listeners) {
    try {
      listener(record);
    } catch {
      // a listener's failure does not change the answer
    }
  }
  return approved ? { approved } : { approved, reason };
}
