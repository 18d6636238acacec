/**
 * The loopback redirect listener of `magi mcp login`: a one-shot HTTP server on 127.0.0.1
 * that takes the authorization server's redirect `GET /callback?code=…&state=…`. The login
 * sends a fresh random `state` with its authorization request; a redirect whose `state` is
 * not that one (a page on the web pointing the person's browser at the port, or a stale tab)
 * is answered 400 and ignored, so only the login magi started can finish.
 *
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The listener of one login. */
export interface LoginCallback {
  /** `http://127.0.0.1:PORT/callback`, the redirect URI to register and send. */
  redirect: string;
  /** The `state` the current authorization request must carry (32 random bytes, base64url). */
  readonly state: string;
  /**
   * The authorization code of the first redirect with the current `state`.
   * @throws Error when that redirect carries `error` instead of a code
   */
  readonly code: Promise<string>;
  /**
   * Starts another authorization round (the server asked for more access): a new `state`
   * and `code`; the old state is no longer accepted.
   */
  again(): void;
  /** Stops listening. */
  close(): Promise<void>;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Whether `given` is `expected`, compared in constant time. */
function sameState(given: string | null, expected: string): boolean {
  return timingSafeEqual(digest(given ?? ""), digest(expected)) && given !== null;
}

/** One authorization round: its state, and its code once the redirect came. */
function round() {
  const code = Promise.withResolvers<string>();
  // The caller awaits code only after the authorization URL is out; a refusal before then
  // must not count as unhandled.
  code.promise.catch(() => {});
  return { state: randomBytes(32).toString("base64url"), code, done: false };
}

/** Starts the listener on a free loopback port. */
export function listenForLogin(): LoginCallback {
  let now = round();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname !== "/callback") return new Response("not found\n", { status: 404 });
    if (!sameState(url.searchParams.get("state"), now.state)) {
      return new Response(
        "magi: this redirect is not from the login magi started (its state does not match); ignored.\n",
        { status: 400 },
      );
    }
    if (now.done) return new Response("magi: this login is already finished.\n", { status: 409 });
    now.done = true;
    const got = url.searchParams.get("code");
    if (got) now.code.resolve(got);
    else {
      const error = url.searchParams.get("error") ?? "no code";
      now.code.reject(new Error(`the server refused the login: ${error}`));
    }
    return new Response(
      got ? "magi: logged in; you can close this page.\n" : "magi: the login failed.\n",
    );
  });
  return {
    redirect: `http://127.0.0.1:${server.addr.port}/callback`,
    get state() {
      return now.state;
    },
    get code() {
      return now.code.promise;
    },
    again: () => void (now = round()),
    close: () => server.shutdown(),
  };
}
