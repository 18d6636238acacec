/**
 * Quoting a word for a POSIX shell, the one way magi writes shell words (shims, run lines it
 * builds, messages that show a command).
 *
 * @module
 */

/** Characters a word may have and stay bare: bash reads it literally. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** A bare `NAME=…` first word would be an assignment, not a word. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * `word` in single quotes, a `'` within written `'\''`: always one literal word for sh.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { singleQuoted } from "./quote.ts";
 * assert.equal(singleQuoted("it's"), "'it'\\''s'");
 * ```
 */
export function singleQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * `word` as bash reads it literally: bare when it is plain, else {@link singleQuoted}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shellWord } from "./quote.ts";
 * assert.equal(shellWord("a.txt"), "a.txt");
 * assert.equal(shellWord("two words"), "'two words'");
 * assert.equal(shellWord("--x=1"), "--x=1");
 * assert.equal(shellWord("A=b"), "'A=b'");
 * ```
 */
export function shellWord(word: string): string {
  return PLAIN.test(word) && !ASSIGNMENT.test(word) ? word : singleQuoted(word);
}
