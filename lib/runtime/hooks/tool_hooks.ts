/**
 * The hooks around one tool call, for `runTool`: `before_tool` may block the call (its reason
 * becomes the error result the model reads) or approve what the policy would ask about that
 * call — the door still decides, so a deny rule stands, and an escalation the running tool
 * asks for on the approvals socket goes to the person; `after_tool` sees the result.
 *
 * @module
 */
import type { Approver } from "../../policy/gate.ts";
import type { Runtime } from "../runtime.ts";

/** What `before_tool` decided for a call. */
export interface BeforeTool {
  /** The refusal note (the call does not run). */
  refused?: string;
  /** The approver the call goes on with (a hook approved it: asks are answered yes). */
  approve?: Approver;
}

/** The call's arguments as the hook sees them: the object, or the JSON text parsed. */
function inputOf(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Runs the `before_tool` hooks of a call. */
export async function beforeTool(
  rt: Runtime,
  call: { name: string; args: unknown; approve?: Approver },
): Promise<BeforeTool> {
  if (!rt.hooks?.has("before_tool")) return { approve: call.approve };
  const verdict = await rt.hooks.run(rt, "before_tool", {
    tool_name: call.name,
    tool_input: inputOf(call.args),
  }, call.name);
  if (verdict.blocked !== undefined) {
    return { refused: `[magi: a before_tool hook refused the call: ${verdict.blocked}]` };
  }
  if (!verdict.allow) return { approve: call.approve };
  const outer = call.approve;
  // A rule's ask about this call is approved; a deny never reaches an approver, and the
  // door's own ask (no sandbox can start) and a running tool's escalation (the approvals
  // socket) still go to the person.
  const approve: Approver = (request) =>
    request.verdict.decision === "ask" && !request.escalation
      ? Promise.resolve("yes")
      : outer
      ? outer(request)
      : Promise.resolve(undefined);
  return { approve };
}

/** Runs the `after_tool` hooks of a call with its (masked, bounded) result. */
export async function afterTool(
  rt: Runtime,
  call: { name: string; args: unknown },
  result: { said: string; is_error: boolean },
): Promise<void> {
  if (!rt.hooks?.has("after_tool")) return;
  await rt.hooks.run(rt, "after_tool", {
    tool_name: call.name,
    tool_input: inputOf(call.args),
    tool_response: { said: result.said, is_error: result.is_error },
  }, call.name);
}
