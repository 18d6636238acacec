/**
 * The environment every child process gets (SPEC S5.2): magi's own environment, PATH with the
 * tool links first, and the MAGI_* context variables, each set only where it has a value.
 *
 * @module
 */

/** The context variables magi sets; a missing one means the tool has no such context. */
export interface CallContext {
  /** The call's working directory: always set. */
  MAGI_CWD: string;
  MAGI_SESSION?: string;
  MAGI_CONFIG?: string;
  MAGI_SESSIONS_DIR?: string;
  MAGI_MAIL_DIR?: string;
  MAGI_PARENT?: string;
  MAGI_CONTEXT_PATH?: string;
  MAGI_ATTACH_DIR?: string;
  MAGI_PRIV?: string;
  MAGI_APPROVAL_SOCK?: string;
  /**
   * The call's own token for the approvals socket (set per invocation by the gate, not
   * here: see `lib/policy/approvals.ts`); masked.
   */
  MAGI_APPROVAL_TOKEN?: string;
  /** Who makes the call the child runs for: "person", "model" or "mcp" (see `caller.ts`). */
  MAGI_CALLER?: string;
}

/**
 * Builds a child's environment. Inherited `MAGI_*` variables (magi running inside a magi tool)
 * are dropped first, so a child never sees context that is not its own.
 *
 * @param base the environment magi was started with
 * @param linksDir the tool-links folder, put first on PATH
 */
export function childEnv(
  base: Record<string, string>,
  linksDir: string | undefined,
  context: CallContext,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith("MAGI_")) env[k] = v;
  const path = base.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  env.PATH = linksDir ? `${linksDir}:${path}` : path;
  for (const [k, v] of Object.entries(context)) if (v !== undefined && v !== "") env[k] = v;
  return env;
}
