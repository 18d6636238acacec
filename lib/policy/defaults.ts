/**
 * The default policy (SPEC S8.1), as rules like those a person writes. README.md lists
 * them; `policy.disable` removes one by its id. A call no rule matches is asked about.
 *
 * @module
 */
import type { RuleConfig } from "./rules.ts";

/**
 * Read-only commands `run` may start without asking (their paths inside the roots, no
 * dynamic words, the program the one magi found on its own PATH).
 */
export const READ_ONLY_COMMANDS = [
  "ls *",
  "pwd *",
  "cd *",
  "echo *",
  "cat *",
  "head *",
  "tail *",
  "wc *",
  "stat *",
  "du *",
  "df *",
  "which *",
  "whoami *",
  "uname *",
  "true",
  "false",
  "grep *",
  "find *",
  "tree *",
  "git status *",
  "git diff *",
  "git log *",
  "git show *",
  "git branch",
  "git branch --show-current",
  "git rev-parse *",
];

/**
 * Options of those commands that write files, start other programs or follow symlinks, as
 * rules a person can read (and disable). The option table (`options.ts`) holds the same
 * knowledge for every option and asks whatever rule allows: long options reach these
 * patterns written out in full (`--out=x` is read as `--output=x`).
 */
export const READ_ONLY_EXCEPTIONS = [
  "git --output *",
  "git --output=* *",
  "git --ext-diff *",
  "git --textconv *",
  "git --show-signature *",
  // Config from the line or another repository names programs git starts.
  "git --config-env* *",
  "git --exec-path=* *",
  "find -exec *",
  "find -execdir *",
  "find -ok *",
  "find -okdir *",
  "find -delete *",
  "find -fprint* *",
  "find -fls *",
  "tree -o *",
  "tree --output* *",
  "tree -R *",
  // Following symlinks reads wherever they point, outside the roots too.
  "grep -R *",
  "grep --dereference-recursive *",
  "rg -L *",
  "rg --follow *",
  "find -L *",
  "find -follow *",
  "tree -l *",
  "ls -L *",
  "ls --dereference *",
  "du -L *",
  "du --dereference *",
  // Reads the files a list names.
  "wc --files0-from=* *",
  "du --files0-from=* *",
  "find -files0-from *",
];

/** Every default rule, by id. */
export const DEFAULT_RULES: RuleConfig[] = [
  {
    id: "read-inside-roots",
    tool: "{read,grep}",
    source: "builtin",
    where: "inside_roots",
    decision: "allow",
    reason: "reading inside the roots",
  },
  {
    id: "write-inside-roots",
    tool: "{write,edit}",
    source: "builtin",
    where: "inside_roots",
    decision: "ask",
    reason: "changing a file",
  },
  {
    id: "outside-roots",
    tool: "{read,grep,write,edit,run}",
    source: "builtin",
    where: "outside_roots",
    decision: "deny",
    reason: "a path outside the roots",
  },
  {
    id: "outside-roots-tools",
    tool: "*",
    source: ["tools_dir", "shipped", "lua", "project", "peer", "mcp"],
    where: "outside_roots",
    decision: "deny",
    reason: "a path outside the roots (an installed tool reads what it is given)",
  },
  {
    id: "run-read-only",
    tool: "run",
    source: "builtin",
    command: READ_ONLY_COMMANDS,
    decision: "allow",
    reason: "a read-only command",
  },
  {
    id: "run-read-only-exceptions",
    tool: "run",
    source: "builtin",
    command: READ_ONLY_EXCEPTIONS,
    decision: "ask",
    reason: "an option that writes files, starts programs or follows symlinks",
  },
  {
    // What they start passes the door call by call: a skill's script, a sub-agent's tools.
    id: "skills-and-agents",
    tool: "{skill,agent,mail}",
    source: "builtin",
    decision: "allow",
    reason: "loading a skill, starting a sub-agent or leaving mail (what they run is judged alone)",
  },
  {
    id: "installed-tools",
    tool: "*",
    source: ["tools_dir", "shipped", "lua"],
    decision: "allow",
    reason: "a tool the person installed",
  },
];
