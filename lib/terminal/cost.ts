/**
 * Token usage and what it cost: each answer's tokens in, out and cached (read from the
 * provider's cache), a session's totals, and their price from config `prices` (US dollars
 * per million tokens, by model) — no network, no built-in price list.
 *
 * @module
 */

/** One turn's counts; providers that report cache reads give one of the cached fields. */
export interface Counts {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  cache_read_input_tokens?: number;
  cached_input_tokens?: number;
}

/** A model's prices in US dollars per million tokens (config `prices.MODEL`). */
export interface Price {
  input?: number;
  output?: number;
  /** Cached input tokens (read from the provider's cache); default: the input price. */
  cached?: number;
}

/** The cached input tokens a provider reported, whatever it called them. */
export function cachedOf(u: Counts): number {
  return u.cached_tokens ?? u.cache_read_input_tokens ?? u.cached_input_tokens ?? 0;
}

/** A session's usage so far. */
export class Tally {
  input = 0;
  output = 0;
  cached = 0;
  turns = 0;

  add(u: Counts): void {
    this.input += u.input_tokens ?? 0;
    this.output += u.output_tokens ?? 0;
    this.cached += cachedOf(u);
    this.turns++;
  }

  /** Forgets the counts (`/clear`). */
  reset(): void {
    this.input =
      this.output =
      this.cached =
      this.turns =
        0;
  }
}

function thousands(n: number): string {
  return n.toLocaleString("en-US");
}

/** `1,234 in · 56 out · 1,000 cached`. */
export function describeCounts(input: number, output: number, cached: number): string {
  const parts = [`${thousands(input)} in`, `${thousands(output)} out`];
  if (cached > 0) parts.push(`${thousands(cached)} cached`);
  return parts.join(" · ");
}

/** The price of some tokens, in US dollars, or undefined when the model has no price. */
export function costOf(
  input: number,
  output: number,
  cached: number,
  price: Price | undefined,
): number | undefined {
  if (!price || (price.input === undefined && price.output === undefined)) return undefined;
  const fresh = Math.max(0, input - cached);
  return (fresh * (price.input ?? 0) + cached * (price.cached ?? price.input ?? 0) +
    output * (price.output ?? 0)) / 1e6;
}

/** `$0.0123`. */
export function dollars(amount: number): string {
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;
}

/** The price of `model` from config `prices` (exact name, else its part after a `/`). */
export function priceFor(
  prices: Readonly<Record<string, Readonly<Price>>> | undefined,
  model: string,
): Price | undefined {
  if (prices === undefined) return undefined;
  return prices[model] ?? prices[model.split("/").at(-1) ?? model];
}

/** The `/cost` report: totals and, when priced, what they cost. */
export function costReport(
  tally: Tally,
  model: string,
  prices: Readonly<Record<string, Readonly<Price>>> | undefined,
): string {
  const counts = describeCounts(tally.input, tally.output, tally.cached);
  const price = priceFor(prices, model);
  const cost = costOf(tally.input, tally.output, tally.cached, price);
  const money = cost === undefined
    ? `no price for "${model}" (config prices.${model}: {"input": …, "output": …} per million tokens)`
    : `${dollars(cost)} at the configured prices`;
  return `tokens this session: ${counts} (${tally.turns} requests)\n${money}`;
}
