/**
 * One prompt style everywhere (chat, `magi call`, tools' questions): the choices written as
 * `[y]es / [n]o / [a]lways`, each answered by its letter or its whole word, in any case,
 * or by its number. A letter is the word's first one not taken by an earlier choice.
 *
 * @module
 */

/** A choice's word and the letter that answers it (undefined when none is free). */
export interface Keyed {
  word: string;
  key?: string;
}

/** The letter of each choice: its first letter not taken by an earlier one. */
export function keyed(words: readonly string[]): Keyed[] {
  const taken = new Set<string>();
  return words.map((word) => {
    for (const ch of word.toLowerCase()) {
      if (/[a-z0-9]/.test(ch) && !taken.has(ch)) {
        taken.add(ch);
        return { word, key: ch };
      }
    }
    return { word };
  });
}

/**
 * The choices as the prompt shows them.
 *
 * @example
 * ```ts
 * import { choicesLine } from "./choice.ts";
 * console.assert(choicesLine(["yes", "no", "always"]) === "[y]es / [n]o / [a]lways");
 * ```
 */
export function choicesLine(words: readonly string[]): string {
  return keyed(words).map(({ word, key }) => {
    if (key === undefined) return word;
    const at = word.toLowerCase().indexOf(key);
    return `${word.slice(0, at)}[${word[at]}]${word.slice(at + 1)}`;
  }).join(" / ");
}

/**
 * The choice an answer names: its word (any case), its letter, or its number from 1.
 *
 * @returns the choice as written in `words`, or undefined when the answer names none
 */
export function pickChoice(answer: string, words: readonly string[]): string | undefined {
  const text = answer.trim().toLowerCase();
  if (text === "") return undefined;
  const exact = words.find((w) => w.toLowerCase() === text);
  if (exact !== undefined) return exact;
  const byKey = keyed(words).find((k) => k.key === text);
  if (byKey) return byKey.word;
  if (/^\d+$/.test(text)) return words[Number(text) - 1];
  return undefined;
}

/** The answer to a question with choices: the choice it names, else the answer unchanged. */
export function normaliseAnswer(answer: string, words: readonly string[] | undefined): string {
  if (!words?.length) return answer.trim();
  return pickChoice(answer, words) ?? answer.trim();
}

/** The approval choices: `[y]es / [n]o / [a]lways`. */
export const APPROVAL = ["yes", "no", "always"] as const;

/** What an approval answer means: yes, no or always; anything else is no. */
export function approvalOf(answer: string): "yes" | "no" | "always" {
  const picked = pickChoice(answer, APPROVAL);
  return picked === "yes" || picked === "always" ? picked : "no";
}
