/**
 * The approvals socket (SPEC S5.2 `MAGI_APPROVAL_SOCK`, S8.1): a Unix socket per runtime
 * where a running tool asks the person to approve something. Newline-delimited JSON: the
 * tool writes `{"ask": "…", "token": "$MAGI_APPROVAL_TOKEN"}` (and may add `"tool": NAME`),
 * magi answers `{"approved": true|false}` (with `"reason"` when it is refused), one answer
 * per request, in order, on the same connection.
 *
 * Every request is bound to the call it comes from: each invocation of a call gets its own
 * token (`MAGI_APPROVAL_TOKEN` in its environment: the runtime's masked key, then a random
 * part), valid while it runs, which the server maps to that call's own approver and tool. A
 * request without a token, or with one of no running call, is refused — no call answers
 * another's request, however many run at once.
 *
 * The policy answers first: the request is judged as a call of the pseudo-tool `approval`
 * with the fields `ask` and `tool`, so a rule such as
 * `{"tool": "approval", "fields": {"ask": "Deploy to staging*"}, "decision": "allow"}`
 * approves it. When the policy says `ask`, the person is asked if the request's call has an
 * approver (a terminal); a `before_tool` hook's "allow" never answers it (the request goes
 * to the approver as an `escalation`); otherwise — non-interactive, and under `--auto` too,
 * which approves no escalation — the answer is no. Every request and answer is given to the
 * listeners added with {@link onApproval} (the session records them).
 *
 * @module
 */
import { type Policy, verdictLine } from "./decide.ts";
import { type ApprovalAnswer, type Approver, door, type DoorCall, settle } from "./door.ts";
import { NONE } from "./effects.ts";
import { judge, sessionSettings } from "./facts.ts";
import { answerJsonLines, serveUnixSocket } from "../exec/unix_socket.ts";

/** One request and its answer. */
export interface ApprovalRecord {
  ask: string;
  tool?: string;
  approved: boolean;
  /** Who answered: "policy", "person", "no person" or "no call" (no valid token). */
  by: string;
  reason: string;
}

/** The call a token stands for, while it runs. */
export interface LentCall {
  /** The call's tool (the request's `tool` field is the tool's own word; this is magi's). */
  tool: string;
  /** The call's approver; none: no person can be asked for it. */
  approve?: Approver;
}

/** The name a token is masked as, and the variable that carries it. */
export const TOKEN_VARIABLE = "MAGI_APPROVAL_TOKEN";

interface Server {
  path: string;
  /** The runtime's key: the first part of every token (masked as `$MAGI_APPROVAL_TOKEN`). */
  key: string;
  /** The running calls' tokens. */
  calls: Map<string, LentCall>;
  listeners: ((r: ApprovalRecord) => void)[];
}

/** Random bytes as base64url text (no padding). */
function randomText(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/**
 * A runtime's approvals key: 32 random bytes (43 characters). The runtime masks it (give it
 * to the masker as `MAGI_APPROVAL_TOKEN`) and passes it to {@link serveApprovals}.
 */
export function newApprovalKey(): string {
  return randomText(32);
}

const servers = new WeakMap<Policy, Server>();

/**
 * Starts the approvals socket of a runtime (once per policy) and returns its path. The
 * listener does not keep magi alive; the socket's folder is removed when magi exits.
 */
export function serveApprovals(policy: Policy, key: string = newApprovalKey()): string {
  const found = servers.get(policy);
  if (found) return found.path;
  const server: Server = { path: "", key, calls: new Map(), listeners: [] };
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

/** A call's token and the function that ends it. */
export interface Lent {
  /** The value of `MAGI_APPROVAL_TOKEN` for the call; undefined when no socket is served. */
  token?: string;
  release: () => void;
}

/**
 * Gives a running call its token: requests that carry it are answered with this call's
 * approver and caller, until `release` (when the call ends). Without a socket, no token.
 */
export function lendApprover(policy: Policy, call: LentCall): Lent {
  const server = servers.get(policy);
  if (!server) return { release: () => {} };
  const token = `${server.key}.${randomText(18)}`;
  server.calls.set(token, call);
  return { token, release: () => server.calls.delete(token) };
}

function serveConnection(policy: Policy, server: Server, conn: Deno.Conn): Promise<void> {
  return answerJsonLines(conn, (line) => answerLine(policy, server, line));
}

async function answerLine(
  policy: Policy,
  server: Server,
  line: string,
): Promise<{ approved: boolean; reason?: string }> {
  let request: { ask?: unknown; tool?: unknown; token?: unknown };
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
  const lent = typeof request.token === "string" ? server.calls.get(request.token) : undefined;
  if (!lent) {
    const reason = typeof request.token !== "string"
      ? `the request carries no "token": send the value of $${TOKEN_VARIABLE} ` +
        "from your call's environment"
      : `the request's "token" is not a running call's: each call's $${TOKEN_VARIABLE} ` +
        "is good only while that call runs";
    tellListeners(server, {
      ask,
      ...(tool ? { tool } : {}),
      approved: false,
      by: "no call",
      reason,
    });
    return { approved: false, reason };
  }
  // The request passes the door as a call of the pseudo-tool `approval`.
  const verdict = judge(policy, {
    tool: "approval",
    source: "magi",
    args: tool ? { ask, tool } : { ask },
    cwd: policy.roots[0] ?? "/",
  });
  const call: DoorCall = {
    // The person sees the call that asks (magi's name), and the tool's own word for itself.
    tool: tool && tool !== lent.tool ? `${tool} (in ${lent.tool})` : lent.tool,
    verdict: { ...verdict, reason: verdict.decision === "ask" ? ask : verdict.reason },
    effects: NONE,
    // Judged as no person's own call whoever made the call (a person's `magi call` would
    // allow it outright): only a rule of the person's or the person asked grants it.
    caller: "model",
    settings: sessionSettings(policy),
    // A tool asking for more than its call was given: `--auto` does not grant it.
    escalation: true,
  };
  const ruling = door(call);
  // The request's own call's approver, never another call's; it answers only if a person
  // does (an approver with no one behind it, such as a hook's for a call without a terminal,
  // gives no answer).
  let answered: ApprovalAnswer;
  const approve: Approver | undefined = lent.approve &&
    (async (request) => (answered = await lent.approve!(request)));
  const settled = await settle(
    { approve, always: new Set() },
    call,
    ruling,
    "approval " + ask,
  );
  const approved = settled.run;
  const by = ruling.decision !== "ask" ? "policy" : answered ? "person" : "no person";
  let reason = verdictLine(verdict);
  if (ruling.decision === "ask") {
    if (by === "person") {
      reason = approved ? "approved by the person" : "refused by the person";
    } else if (call.settings.approval === "never") {
      reason = "no person to ask: --auto approves no escalation (a rule such as " +
        '{"tool": "approval", "fields": {"ask": "…"}, "decision": "allow"} would): refused';
    } else reason = "no person to ask (non-interactive): refused";
  }
  tellListeners(server, { ask, ...(tool ? { tool } : {}), approved, by, reason });
  return approved ? { approved } : { approved, reason };
}

function tellListeners(server: Server, record: ApprovalRecord): void {
  for (const listener of server.listeners) {
    try {
      listener(record);
    } catch {
      // a listener's failure does not change the answer
    }
  }
}
