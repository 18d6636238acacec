/**
 * Every test's own time limit. Loaded before each test file (`deno test --preload
 * tests/time_limit.ts`, in the `test` task), it wraps `Deno.test` so that a test still running
 * after `MAGI_TEST_LIMIT_SECONDS` (default 120 s, far below CI's 15 minutes) fails with one line
 * naming it, instead of holding the suite for minutes. The test's own cleanup (`await using`)
 * is left behind, as with any failure; its child processes go with the test run.
 *
 * @module
 */

type Fn = (t: Deno.TestContext) => void | Promise<void>;

const LIMIT_MS = 1000 * (Number(Deno.env.get("MAGI_TEST_LIMIT_SECONDS")) || 120);

/** `fn`, failing with "… ran past its time limit" after LIMIT_MS. */
function limited(name: string, fn: Fn): Fn {
  return async (t) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`test "${name}" ran past its time limit of ${LIMIT_MS / 1000} s`)),
        LIMIT_MS,
      );
    });
    try {
      await Promise.race([fn(t), expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The definition of a `Deno.test` call (any overload), its function wrapped. */
function wrapped(args: unknown[]): Deno.TestDefinition {
  const [first, second, third] = args;
  if (typeof first === "function") {
    return { name: first.name, fn: limited(first.name, first as Fn) };
  }
  if (typeof first === "string") {
    const fn = (typeof second === "function" ? second : third) as Fn;
    const options = typeof second === "function" ? {} : second as Partial<Deno.TestDefinition>;
    return { ...options, name: first, fn: limited(first, fn) };
  }
  const def = first as Deno.TestDefinition;
  const fn = (typeof second === "function" ? second : def.fn) as Fn;
  const name = def.name ?? fn.name;
  return { ...def, name, fn: limited(name, fn) };
}

const test = Deno.test;
const limitedTest = Object.assign(
  (...args: unknown[]) => test(wrapped(args)),
  {
    only: (...args: unknown[]) => test.only(wrapped(args)),
    ignore: (...args: unknown[]) => (test.ignore as (...a: unknown[]) => void)(...args),
  },
);
Object.defineProperty(Deno, "test", { value: limitedTest, configurable: true, writable: true });
