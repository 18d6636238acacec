/**
 * Makes the provider SDKs' own HTTP retries visible. The OpenAI and Anthropic SDKs retry
 * 408, 409, 429, 5xx and failed connections silently; they send the attempt number in the
 * `x-stainless-retry-count` header. A `fetch` wrapped here sees each response (or failure)
 * and tells its listener, before the SDK waits, that it will retry and roughly when
 * (`retry-after-ms`, `retry-after`, else the SDKs' backoff of 0.5 s doubling up to 8 s), then
 * tells `sent` when the retry goes out: the wait is over, however long it was guessed to be.
 * It also remembers the last URL tried, so a provider that cannot be reached can be named.
 *
 * @module
 */

/** What the listener is told before the SDK retries. */
export interface HttpRetry {
  /** The HTTP status, or undefined when the connection failed. */
  status?: number;
  /** About how long until the next attempt, in milliseconds. */
  delayMs: number;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** The most attempts the SDK makes (retries + 1). */
  attempts: number;
}

/** A watched fetch and where its news goes. */
export class HttpWatch {
  /** Told before each SDK retry; set by whoever draws the screen. */
  listener: ((retry: HttpRetry) => void) | undefined;
  /** Told when a retry is sent (`attempt` from 2): what the listener was told is over. */
  sent: ((attempt: number) => void) | undefined;
  /** The last URL a request was sent to (without query). */
  lastUrl: string | undefined;
  readonly #maxRetries: number;
  readonly #inner: typeof fetch;

  constructor(maxRetries: number, inner: typeof fetch = globalThis.fetch) {
    this.#maxRetries = maxRetries;
    this.#inner = inner;
  }

  /** The fetch to give the SDK. */
  readonly fetch: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    this.lastUrl = url.split("?")[0];
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
    const done = Number(headers.get("x-stainless-retry-count") ?? "0") || 0;
    const more = done < this.#maxRetries;
    if (done > 0) this.#sentRetry(done + 1);
    let response: Response;
    try {
      response = await this.#inner(input, init);
    } catch (error) {
      if (more && !init?.signal?.aborted) this.#tell(undefined, backoff(done), done);
      throw error;
    }
    if (more && retryable(response)) {
      this.#tell(response.status, delayOf(response.headers) ?? backoff(done), done);
    }
    return response;
  };

  #sentRetry(attempt: number): void {
    try {
      this.sent?.(attempt);
    } catch { /* the screen's trouble is not the request's */ }
  }

  #tell(status: number | undefined, delayMs: number, done: number): void {
    try {
      this.listener?.({ status, delayMs, attempt: done + 1, attempts: this.#maxRetries + 1 });
    } catch { /* the screen's trouble is not the request's */ }
  }
}

function retryable(response: Response): boolean {
  const should = response.headers.get("x-should-retry");
  if (should === "true") return true;
  if (should === "false") return false;
  const s = response.status;
  return s === 408 || s === 409 || s === 429 || s >= 500;
}

/** The server's own wait, in ms, when it gave one the SDKs honour (under 60 s). */
function delayOf(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.has("retry-after-ms") && Number.isFinite(ms) && ms >= 0 && ms < 60_000) return ms;
  const after = headers.get("retry-after");
  if (after === null) return undefined;
  const seconds = Number(after);
  const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
  return Number.isFinite(wait) && wait >= 0 && wait < 60_000 ? wait : undefined;
}

/** The SDKs' backoff without its jitter. */
function backoff(done: number): number {
  return Math.min(500 * 2 ** done, 8000);
}

/** One line for the status line: `retrying in 2 s (429)`. */
export function describeRetry(retry: HttpRetry): string {
  const seconds = Math.max(1, Math.round(retry.delayMs / 1000));
  const why = retry.status === undefined ? "connection failed" : String(retry.status);
  return `retrying in ${seconds} s (${why}) ${retry.attempt + 1}/${retry.attempts}`;
}
