/**
 * The recorded set of programs for magi new's tests and score (`scripts/new_score.ts`): the
 * command line each was recorded from, and the flags people use every day, which a default
 * declaration must type. The texts live in `tests/testdata/new/recorded/NAME/` (recorded by
 * `tests/testdata/new/record.ts`).
 *
 * @module
 */

/** One help invocation recorded: its arguments, the file holding what it printed, its status. */
export interface RecordedRun {
  args: string[];
  file: string;
  code: number;
  stream: "stdout" | "stderr";
}

/** A recorded program's `meta.json`. */
export interface RecordedMeta {
  /** The command line `magi new --from` gets: `git commit`. */
  from: string;
  /** The program's version line, as it printed it. */
  version: string;
  /** The date recorded, `YYYY-MM-DD`. */
  recorded: string;
  runs: RecordedRun[];
  /** The manual page, when one was installed. */
  man?: { page: string; file: string };
}

/** What the set says about one program. */
export interface RecordedEntry {
  from: string;
  /** A version to record when the program's own `--version` says nothing useful. */
  version?: string;
  /** Flags a default declaration must type, by one spelling each. */
  everyday: string[];
}

export const RECORDED: Record<string, RecordedEntry> = {
  curl: { from: "curl", everyday: ["-X", "-H", "-L", "-I", "-k", "-o", "-s", "-d", "-u", "-f"] },
  grep: {
    from: "grep",
    everyday: ["-A", "-B", "-C", "--include", "-r", "-i", "-n", "-l", "-v", "-E"],
  },
  tar: { from: "tar", everyday: ["-J", "--exclude", "-c", "-x", "-t", "-f", "-z", "-v", "-C"] },
  sed: { from: "sed", everyday: ["-i", "-n", "-e", "-E"] },
  ls: { from: "ls", everyday: ["-R", "-l", "-a", "-h", "-t", "-r", "-1", "-S"] },
  find: {
    from: "find",
    everyday: ["-name", "-type", "-maxdepth", "-mtime", "-size", "-exec", "-print0"],
  },
  jq: { from: "jq", everyday: ["--arg", "-r", "-c", "-n", "-s", "-e"] },
  "git-commit": {
    from: "git commit",
    everyday: ["-m", "-a", "--amend", "--no-edit", "-F", "--dry-run"],
  },
  "ssh-keygen": {
    from: "ssh-keygen",
    version: "OpenSSH_9.2p1 Debian-2+deb12u6 (ssh -V)",
    everyday: ["-t", "-b", "-f", "-C", "-N", "-l", "-y"],
  },
  awk: { from: "awk", version: "mawk 1.3.4 20200120", everyday: ["-F", "-v", "-f"] },
  test: {
    from: "test",
    version: "test (GNU coreutils) 9.1",
    everyday: [], /* the expression carries -f, -d, …: typed as words */
  },
  xargs: { from: "xargs", everyday: ["-0", "-n", "-I", "-P", "-r"] },
  wc: { from: "wc", everyday: ["-l", "-w", "-c"] },
  sort: { from: "sort", everyday: ["-n", "-r", "-u", "-k", "-t", "-h"] },
  "cargo-build": { from: "cargo build", everyday: ["--release", "-p", "--features"] },
  "docker-ps": { from: "docker ps", everyday: ["-a", "-q", "--format", "-f"] },
  "docker-context-ls": { from: "docker context ls", everyday: ["-q", "--format"] },
  "kubectl-version": {
    from: "kubectl version",
    version: "kubectl Client Version: v1.32.4-dispatcher",
    everyday: ["--client", "-o"],
  },
  dotenv: { from: "dotenv", everyday: ["-f", "--quote"] },
};
