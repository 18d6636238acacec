import assert from "node:assert/strict";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { DEFAULT_CHARS_PER_TOKEN, tokenizerFor, TokenMeter } from "../../lib/agent/tokens.ts";
import type { Message } from "../../lib/agent/provider.ts";

const TEXT = "The quick brown fox jumps over the lazy dog; then it runs `ls -la /tmp`.\n".repeat(
  20,
);

Deno.test("tokenizerFor(): OpenAI's models are counted with o200k_base; others get none", async () => {
  const count = await tokenizerFor("gpt-4o-mini");
  assert.ok(count);
  assert.equal(count(TEXT), countTokens(TEXT));
  assert.ok(await tokenizerFor("o3-mini"));
  assert.ok(await tokenizerFor("openai/gpt-4o"));
  assert.equal(await tokenizerFor("claude-sonnet-4-5"), undefined);
  assert.equal(await tokenizerFor("qwen3:8b"), undefined);
});

Deno.test("TokenMeter: 3.5 characters a token, then the provider's measured ratio", () => {
  const meter = new TokenMeter();
  const messages: Message[] = [{ role: "user", text: "x".repeat(3492) }];
  const chars = 3500 + "sys".length + 2;
  assert.equal(meter.request("sys", [], messages), Math.ceil(chars / DEFAULT_CHARS_PER_TOKEN));
  meter.observe(7000, 100); // too few tokens to learn from
  assert.equal(meter.charsPerToken, DEFAULT_CHARS_PER_TOKEN);
  meter.observe(7000, 2000);
  assert.equal(meter.charsPerToken, 3.5);
  meter.observe(10_000, 4000);
  assert.equal(meter.charsPerToken, 2.5);
  meter.observe(100_000, 1000);
  assert.equal(meter.charsPerToken, 8);
});

Deno.test("TokenMeter with a tokenizer counts the texts and ignores the ratio", async () => {
  const meter = new TokenMeter();
  meter.useTokenizer(await tokenizerFor("gpt-4.1"));
  const messages: Message[] = [
    { role: "user", text: TEXT },
    { role: "tool", result: { id: "c", name: "t", said: TEXT, is_error: false } },
  ];
  const n = meter.request("", [], messages);
  assert.ok(n >= 2 * countTokens(TEXT) && n < 2 * countTokens(TEXT) + 40, `${n}`);
  meter.observe(10_000, 4000);
  assert.equal(meter.charsPerToken, DEFAULT_CHARS_PER_TOKEN);
});
