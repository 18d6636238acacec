/**
 * Wrappers (SPEC S8.1) as data: programs that start the command written after their own
 * options and operands (`timeout 5 CMD`, `strace -f CMD`). `shell.ts` unwraps them, so the
 * command inside meets the rules — a deny rule for `git push *` meets `strace git push`.
 * Options are space-separated lists; an option not listed makes the line asked about (the
 * wrapped command may start elsewhere than the judge thinks). A wrapper with `ask` is
 * itself asked about, whatever it wraps.
 *
 * `tests/policy/wrappers_test.ts` runs each entry's `example` (which wraps `rm victim`)
 * against a rule denying `rm`.
 *
 * @module
 */

/** One wrapper's options. */
export interface WrapperSpec {
  /** Options that take a value (the next word, or attached). */
  valued: string;
  /** Options that take none. */
  flags: string;
  /** Options whose value is only attached (`--mount=F`, `-mF`). */
  optional?: string;
  /** Options that take two values (`bwrap --bind SRC DEST`). */
  valued2?: string;
  /** Operands before the command (`timeout DURATION`, `chroot NEWROOT`). */
  operands: number;
  /** Every `--long[=value]` word is an option of its own (firejail, valgrind). */
  anyLong?: boolean;
  /** Why the wrapper itself is asked about. */
  ask?: string;
  /** A line that wraps `rm victim`, for the test. */
  example: string;
}

const HELP = "--help --version";

/** The wrappers, by program name. */
export const WRAPPERS: Record<string, WrapperSpec> = {
  timeout: {
    valued: "-s --signal -k --kill-after",
    flags: `--preserve-status -p --foreground -f -v --verbose ${HELP}`,
    operands: 1,
    example: "timeout -s KILL 5 rm victim",
  },
  nice: { valued: "-n --adjustment", flags: HELP, operands: 0, example: "nice -n 5 rm victim" },
  nohup: { valued: "", flags: HELP, operands: 0, example: "nohup rm victim" },
  stdbuf: {
    valued: "-i -o -e --input --output --error",
    flags: HELP,
    operands: 0,
    example: "stdbuf -oL rm victim",
  },
  time: {
    valued: "-f --format -o --output",
    flags: `-p --portability -a --append -v --verbose -q --quiet -V ${HELP}`,
    operands: 0,
    example: "time -p rm victim",
  },
  command: { valued: "", flags: "-p -v -V", operands: 0, example: "command -p rm victim" },
  builtin: { valued: "", flags: "", operands: 0, example: "builtin rm victim" },
  exec: { valued: "-a", flags: "-c -l", operands: 0, example: "exec -c rm victim" },
  setsid: {
    valued: "",
    flags: `-c --ctty -f --fork -w --wait ${HELP}`,
    operands: 0,
    example: "setsid -f rm victim",
  },
  ionice: {
    valued: "-c --class -n --classdata -p --pid -P --pgid -u --uid",
    flags: `-t --ignore ${HELP}`,
    operands: 0,
    example: "ionice -c 3 rm victim",
  },
  taskset: {
    valued: "",
    flags: `-a --all-tasks -c --cpu-list -p --pid ${HELP}`,
    operands: 1,
    example: "taskset -c 0 rm victim",
  },
  chrt: {
    valued: "-T --sched-runtime -P --sched-period -D --sched-deadline",
    flags: "-a --all-tasks -b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr " +
      `-R --reset-on-fork -m --max -p --pid -v --verbose ${HELP}`,
    operands: 1,
    example: "chrt -o 0 rm victim",
  },
  doas: {
    valued: "-u -C",
    flags: "-n -s -L",
    operands: 0,
    ask: "doas runs the command as another user",
    example: "doas -n rm victim",
  },
  sudo: {
    valued: "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role " +
      "-t --type -U --other-user -T --command-timeout",
    flags: "-A --askpass -b --background -E -e --edit -H --set-home -i --login -K " +
      "--remove-timestamp -k --reset-timestamp -l --list -n --non-interactive -P " +
      `--preserve-groups -S --stdin -s --shell -V -v --validate ${HELP}`,
    optional: "--preserve-env",
    operands: 0,
    ask: "sudo runs the command as another user",
    example: "sudo -u root rm victim",
  },
  su: {
    valued: "-c --command -s --shell -g --group -G --supp-group -w --whitelist-environment",
    flags: `-l --login -m -p --preserve-environment -P --pty -f --fast ${HELP}`,
    operands: 0,
    ask: "su runs the command as another user",
    example: "su root -c 'rm victim'",
  },
  runuser: {
    valued: "-c --command -s --shell -g --group -G --supp-group -u --user " +
      "-w --whitelist-environment",
    flags: `-l --login -m -p --preserve-environment -P --pty -f --fast ${HELP}`,
    operands: 0,
    ask: "runuser runs the command as another user",
    example: "runuser -u nobody rm victim",
  },
  pkexec: {
    valued: "--user",
    flags: `--disable-internal-agent --keep-cwd ${HELP}`,
    operands: 0,
    ask: "pkexec runs the command as another user",
    example: "pkexec --user root rm victim",
  },
  flock: {
    valued: "-w --timeout -E --conflict-exit-code -c --command",
    flags: "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close " +
      `-F --no-fork --verbose ${HELP}`,
    operands: 1,
    example: "flock list rm victim",
  },
  watch: {
    valued: "-n --interval -q --equexit -s --shotsdir",
    flags: "-t --no-title -b --beep -e --errexit -g --chgexit -c --color -C --no-color " +
      `-x --exec -p --precise -w --no-wrap -r --no-rerun -d ${HELP}`,
    optional: "--differences",
    operands: 0,
    example: "watch -n 1 rm victim",
  },
  // -a/--argv0 (coreutils 9.5+): `env -a ls ./x` runs ./x.
  env: {
    valued: "-u --unset -C --chdir -S --split-string -a --argv0",
    flags: `-i --ignore-environment -0 --null -v --debug --list-signal-handling ${HELP}`,
    optional: "--ignore-signal --default-signal --block-signal",
    operands: 0,
    example: "env -i FOO=1 rm victim",
  },
  xargs: {
    valued: "-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P --max-procs " +
      "-s --max-chars --process-slot-var --eof --replace",
    flags: "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose " +
      `-x --exit --show-limits ${HELP}`,
    optional: "-e -i -l",
    operands: 0,
    example: "xargs -0 -n 1 rm victim < list",
  },
  unshare: {
    valued: "--propagation --setgroups -S --setuid -G --setgid -R --root -w --wd " +
      "--map-user --map-group --map-users --map-groups -l --load-interp",
    flags: `-f --fork -r --map-root-user -c --map-current-user --keep-caps --map-auto ${HELP}`,
    optional: "-m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup -T --time " +
      "--mount-proc --kill-child --monotonic --boottime",
    operands: 0,
    ask: "unshare starts the command in namespaces of its own",
    example: "unshare -r -n rm victim",
  },
  nsenter: {
    valued: "-t --target -S --setuid -G --setgid --env",
    flags: `-a --all -F --no-fork --preserve-credentials -Z --follow-context ${HELP}`,
    optional: "-m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup -T --time " +
      "-r --root -w --wd",
    operands: 0,
    ask: "nsenter starts the command in another process's namespaces",
    example: "nsenter -t 1 -m rm victim",
  },
  chroot: {
    valued: "--userspec --groups",
    flags: `--skip-chdir ${HELP}`,
    operands: 1,
    ask: "chroot starts the command under another root folder",
    example: "chroot / rm victim",
  },
  strace: {
    valued: "-a -b -e -E -I -o -O -p -P -s -S -u -X -U --output --trace --signal --status " +
      "--abbrev --verbose --raw --read --write --inject --fault --attach --user --env " +
      "--string-limit --columns --summary-sort-by --trace-path --const-print-style",
    flags: "-c -C -d -D -f -F -h -i -k -n -N -q -r -t -T -v -V -w -x -y -z -Z " +
      `--follow-forks --output-separately --summary-only --summary --no-abbrev ${HELP}`,
    operands: 0,
    ask: "strace traces the command it starts",
    example: "strace -f -o trace.txt rm victim",
  },
  ltrace: {
    valued: "-a -A -D -e -F -l -n -o -p -s -u -w -x -X --align --indent --library --output",
    flags: `-b -c -C -f -h -i -L -r -S -t -T -V --demangle --no-signals ${HELP}`,
    operands: 0,
    ask: "ltrace traces the command it starts",
    example: "ltrace -f rm victim",
  },
  firejail: {
    valued: "",
    flags: "",
    operands: 0,
    anyLong: true,
    ask: "firejail starts the command in a sandbox of its own description",
    example: "firejail --noprofile --net=none rm victim",
  },
  bwrap: {
    valued: "--tmpfs --proc --dev --dir --remount-ro --chdir --uid --gid --hostname --unsetenv " +
      "--lock-file --sync-fd --info-fd --json-status-fd --block-fd --userns-block-fd --userns " +
      "--userns2 --pidns --seccomp --add-seccomp-fd --exec-label --file-label --argv0 " +
      "--cap-add --cap-drop --perms --size --args",
    valued2: "--bind --bind-try --ro-bind --ro-bind-try --dev-bind --dev-bind-try --symlink " +
      "--setenv --file --bind-data --ro-bind-data --chmod --overlay-src",
    flags: "--unshare-all --share-net --unshare-user --unshare-user-try --unshare-ipc " +
      "--unshare-pid --unshare-net --unshare-uts --unshare-cgroup --unshare-cgroup-try " +
      "--die-with-parent --as-pid-1 --new-session --clearenv --disable-userns " +
      `--assert-userns-disabled --level-prefix ${HELP}`,
    operands: 0,
    ask: "bwrap starts the command in a sandbox of its own description",
    example: "bwrap --ro-bind / / --dev /dev rm victim",
  },
  setpriv: {
    valued: "",
    flags: "-d --dump --nnp --no-new-privs --init-groups --keep-groups --clear-groups " +
      "--reset-env",
    anyLong: true,
    operands: 0,
    ask: "setpriv starts the command with other privileges",
    example: "setpriv --no-new-privs rm victim",
  },
  "systemd-run": {
    valued: "-p --property -u --unit -M --machine -E --setenv -H --host --uid --gid --nice " +
      "--working-directory --description --slice --on-active --on-boot --on-calendar",
    flags: "--user --system --scope -t --pty -P --pipe -q --quiet -G --collect -S --shell " +
      `--wait --no-block --same-dir -d --no-ask-password ${HELP}`,
    operands: 0,
    ask: "systemd-run starts the command as a service",
    example: "systemd-run --user --wait rm victim",
  },
  prlimit: {
    valued: "-p --pid -o --output",
    flags: `--noheadings --raw --verbose ${HELP}`,
    optional: "-c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y " +
      "--core --data --nice --fsize --sigpending --memlock --rss --nofile --msgqueue --rtprio " +
      "--stack --cpu --nproc --as --locks --rttime",
    operands: 0,
    example: "prlimit --nofile=100 rm victim",
  },
  valgrind: {
    valued: "",
    flags: "-q -v -h",
    anyLong: true,
    operands: 0,
    example: "valgrind --tool=none rm victim",
  },
  eatmydata: { valued: "", flags: "", operands: 0, example: "eatmydata rm victim" },
  faketime: {
    valued: "-f",
    flags: `-m --exclude-monotonic --date-prog ${HELP}`,
    operands: 1,
    example: "faketime 2020-01-01 rm victim",
  },
  setarch: {
    valued: "",
    flags: "-R --addr-no-randomize -F --fdpic-funcptrs -Z --mmap-page-zero -L " +
      "--addr-compat-layout -X --read-implies-exec -B --32bit -I --short-inode -S " +
      `--whole-seconds -T --sticky-timeouts -3 --3gb --4gb --uname-2.6 -v --verbose --list ${HELP}`,
    operands: 1,
    example: "setarch x86_64 -R rm victim",
  },
};

/** A wrapper's option lists, split into sets. */
export interface WrapperOptions {
  valued: Set<string>;
  flags: Set<string>;
  optional: Set<string>;
  valued2: Set<string>;
}

const cache = new Map<string, WrapperOptions>();

/** The option sets of a wrapper (computed once). */
export function wrapperOptions(name: string): WrapperOptions {
  let o = cache.get(name);
  if (!o) {
    const spec = WRAPPERS[name];
    const set = (s: string | undefined) => new Set((s ?? "").split(/\s+/).filter(Boolean));
    o = {
      valued: set(spec.valued),
      flags: set(spec.flags),
      optional: set(spec.optional),
      valued2: set(spec.valued2),
    };
    cache.set(name, o);
  }
  return o;
}

/** Whether `name` is a wrapper. */
export function isWrapper(name: string): boolean {
  return Object.hasOwn(WRAPPERS, name);
}
