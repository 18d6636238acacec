/**
 * Keeping a declaration made by `magi new` small: every declaration goes to the model on every
 * turn, so a program with 150 options (tar, node) must not cost 16 KB of JSON Schema. The
 * options most likely to matter are typed (those of the usage synopsis, those the help text
 * names again, in examples or other options' descriptions, those with a short flag); the rest
 * stay reachable through the `args` parameter, whose words go before the positionals.
 *
 * @module
 */
import { basename } from "node:path";
import { stripExtensions } from "../core/json_schema.ts";
import type { HelpModel, HelpOption } from "./help_parse.ts";
import { type GeneratedSchema, schemaFromModel } from "./schema_gen.ts";

/** Typed parameters (options and positionals) kept by default. */
export const DEFAULT_MAX_PARAMS = 64;

/** The declaration (name, description and parameters, as compact JSON) stays under this, in bytes. */
export const DECLARATION_BUDGET = 4096;

/** Description lengths tried, in characters, before options are dropped to fit the budget. */
const DESCRIPTION_STEPS = [Infinity, 120, 80, 60, 45];

/**
 * Long option names that many programs share and people type often (`--recursive`,
 * `--exclude`, `--in-place`): a prior for ranking, from the conventions of GNU, BSD and
 * common tools, not any one program.
 */
const COMMON_NAMES = new Set(
  ("recursive verbose quiet silent force output exclude include all long human-readable " +
    "ignore-case dry-run message amend file directory format header request location insecure " +
    "head data user in-place expression null arg extract create list xz gzip bzip2 zstd " +
    "after-context before-context context line-number count invert-match files-with-matches " +
    "word-regexp fixed-strings extended-regexp regexp-extended max-count fail reverse sort " +
    "numeric-sort unique key field-separator delimiter type name interactive no-edit all " +
    "raw-output compact-output slurp null-input exit-status version-sort max-depth depth " +
    "parallel jobs config target release features package filter tag")
    .split(" "),
);

/** How the options to type are chosen. */
export interface BoundRequest {
  /** The help text the model was read from (examples and cross-references rank options). */
  text: string;
  /** The command line, such as `["git", "log"]`: its program's name marks example lines. */
  words: readonly string[];
  /** At most this many typed parameters, positionals included; set by the person. */
  maxParams?: number;
  /** The options to type, by any spelling (`-c`, `--create`, `create`); set by the person. */
  only?: string[];
  /** Bytes the parameters may take: the budget less the declaration's name and description. */
  budget: number;
  /** Flags the program's first help page shows beside a fuller one (see `combine.ts`). */
  featured?: Set<string>;
  /** More text showing options in use: a manual page's SYNOPSIS and EXAMPLES. */
  usageText?: string;
  /** A manual page's option sections: how often other entries name an option. */
  references?: string;
}

/** What {@link boundedSchema} made. */
export interface BoundedSchema extends GeneratedSchema {
  /** Options of the help text that are not typed (reachable through `args`), best first. */
  left: HelpOption[];
  /** Options typed. */
  kept: number;
  /** The longest description kept, in characters, when descriptions were shortened. */
  shortened?: number;
  /** Bytes of the parameters' JSON Schema as the model sees it (compact, no `x-magi`). */
  bytes: number;
  /** The budget it was made for, in bytes (`bytes` exceeds it only when the person chose). */
  budget: number;
}

/**
 * The options named by `--only`, in the help text's order.
 *
 * @throws RangeError naming the first name that is no option of the help text
 */
export function pickOptions(model: HelpModel, only: string[]): HelpOption[] {
  const wanted = new Set<HelpOption>();
  for (const raw of only) {
    const name = raw.trim();
    if (name === "") continue;
    const bare = name.replace(/^-+/, "");
    // An exact spelling first (`C` is -C, not -c), then a field-like one (`dry_run`).
    const found = model.options.find((o) =>
      o.names.includes(name) ||
      (!name.startsWith("-") && o.names.some((n) => n.replace(/^-+/, "") === bare))
    ) ?? model.options.find((o) =>
      !name.startsWith("-") && o.names.some((n) =>
        fieldish(n) === fieldish(bare)
      )
    );
    if (!found) {
      const known = model.options.slice(0, 8).map((o) => o.flag).join(", ");
      throw new RangeError(
        `--only names "${name}", which the help text does not list (${known}, …)`,
      );
    }
    wanted.add(found);
  }
  return model.options.filter((o) => wanted.has(o));
}

function fieldish(name: string): string {
  return name.replace(/^-+/, "").toLowerCase().replace(/[^a-z0-9]+/g, "_");
}

/**
 * The options ranked by how likely a person needs them, best first; ties keep the text's order.
 * Required options come first; then points: in the usage synopsis 8, on an example line (one
 * that starts with the program's name, such as `tar -tvf x.tar`) 4, a one-letter flag 4 (3 when
 * uppercase), named in other options' descriptions 1 a time (at most 2), the head of a family
 * (`--exclude` beside `--exclude-from`, `--exclude-tag`) 2; and from `more`: on the first
 * help page beside a fuller one 6, in a manual page's SYNOPSIS 6 (when not in the usage
 * line), on one of its example lines 4, named by its other entries 1.5·log2(1 + times), at
 * most 6.
 */
export function rankOptions(
  model: HelpModel,
  text: string,
  words: readonly string[],
  more: { featured?: Set<string>; usageText?: string; references?: string } = {},
): HelpOption[] {
  const usage = model.usage ?? "";
  const programs = programNames(words, usage);
  const { examples, mentions } = mentionCounts(model.options, text, programs);
  const shown = mentionCounts(model.options, more.usageText ?? "", programs).examples;
  const synopsis = (more.usageText ?? "").replace(/\s+/g, " ");
  const referred = mentionCounts(model.options, more.references ?? "", new Set()).mentions;
  const longs = model.options.flatMap((o) => o.names.filter((n) => n.startsWith("--")));
  const score = (o: HelpOption, i: number): number => {
    if (o.required) return 1e6;
    let s = 0;
    if (o.names.some((n) => inUsage(n, usage))) s += 8;
    else if (o.names.some((n) => inUsage(n, synopsis))) s += 6;
    if (examples.has(o)) s += 4;
    if (shown.has(o)) s += 4;
    if (o.names.some((n) => more.featured?.has(n))) s += 6;
    if (o.names.some((n) => COMMON_NAMES.has(n.replace(/^-+/, "")))) s += 3;
    s += Math.min(6, 1.5 * Math.log2(1 + (referred.get(o) ?? 0)));
    const short = o.names.find((n) => /^-[A-Za-z0-9]$/.test(n));
    if (short) s += /^-[a-z0-9]$/.test(short) ? 4 : 3;
    s += Math.min(2, mentions.get(o) ?? 0);
    const family = o.names.some((n) =>
      n.startsWith("--") && longs.filter((l) => l.startsWith(n + "-")).length >= 2
    );
    if (family) s += 2;
    return s - i / 1e4;
  };
  return model.options.map((o, i) => ({ o, s: score(o, i) }))
    .sort((a, b) => b.s - a.s).map((x) => x.o);
}

/**
 * The schema of a typed tool within bounds. By default at most {@link DEFAULT_MAX_PARAMS} typed
 * parameters, then descriptions shortened and the lowest-ranked options dropped until the
 * parameters fit `budget`. What the person chose (`maxParams`, `only`) is kept as it is, even
 * over the budget. Positionals and required options are always typed.
 *
 * @throws RangeError when `only` names an option the text does not list
 */
export function boundedSchema(model: HelpModel, req: BoundRequest): BoundedSchema {
  const positionals = model.positionals?.length ?? 0;
  const ranked = rankOptions(model, req.text, req.words, req);
  const chosenByPerson = req.only !== undefined || req.maxParams !== undefined;
  let keep: HelpOption[];
  if (req.only !== undefined) {
    const picked = new Set(pickOptions(model, req.only));
    keep = ranked.filter((o) => picked.has(o) || o.required);
  } else {
    const quota = Math.max(0, (req.maxParams ?? DEFAULT_MAX_PARAMS) - positionals);
    keep = ranked.filter((o, i) => i < quota || o.required);
  }
  const program = [basename(req.words[0] ?? ""), ...req.words.slice(1)].join(" ");
  const build = (kept: HelpOption[], limit: number): BoundedSchema => {
    const set = new Set(kept);
    const left = ranked.filter((o) => !set.has(o));
    const options = model.options.filter((o) => set.has(o)).map((o) => shorten(o, limit));
    const trimmed: HelpModel = {
      ...model,
      options,
      positionals: model.positionals?.map((p) => ({
        ...p,
        description: cut(p.description, limit),
      })) ?? null,
    };
    const made = schemaFromModel(trimmed, left.length > 0 ? { left, program } : undefined);
    const bytes = new TextEncoder().encode(JSON.stringify(stripExtensions(made.schema))).length;
    const out: BoundedSchema = { ...made, left, kept: kept.length, bytes, budget: req.budget };
    if (limit !== Infinity) out.shortened = limit;
    return out;
  };
  let made = build(keep, Infinity);
  if (chosenByPerson) return made;
  for (const limit of DESCRIPTION_STEPS.slice(1)) {
    if (made.bytes <= req.budget) return made;
    made = build(keep, limit);
  }
  const limit = DESCRIPTION_STEPS.at(-1)!;
  while (made.bytes > req.budget) {
    const last = keep.findLastIndex((o) => !o.required);
    if (last < 0) break;
    keep = keep.filter((_, i) => i !== last);
    made = build(keep, limit);
  }
  return made;
}

/** The names a program goes by on an example line: `tar`, and the usage line's first word. */
function programNames(words: readonly string[], usage: string): Set<string> {
  const out = new Set<string>();
  if (words[0]) out.add(basename(words[0]));
  const first = usage.split(" ")[0];
  if (first) out.add(basename(first));
  return out;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function inUsage(name: string, usage: string): boolean {
  if (new RegExp(`(^|[\\s\\[|(])${escape(name)}(?=$|[\\s\\]|)=,])`).test(usage)) return true;
  // BSD "[-lv]": a bundle of one-letter flags.
  const letter = /^-([A-Za-z0-9])$/.exec(name)?.[1];
  return letter !== undefined &&
    [...usage.matchAll(/\[-([A-Za-z0-9]{2,})\]/g)].some((m) => m[1].includes(letter));
}

/**
 * Where the text names each option besides its own entry: `examples`, the options on an
 * example line (one that starts with the program's name; `-tvf` names `-t`, `-v` and `-f`),
 * and `mentions`, how often other lines name it.
 */
function mentionCounts(
  options: HelpOption[],
  text: string,
  programs: Set<string>,
): { examples: Set<HelpOption>; mentions: Map<HelpOption, number> } {
  const examples = new Set<HelpOption>();
  const mentions = new Map<HelpOption, number>();
  const byName = new Map<string, HelpOption>();
  for (const o of options) for (const n of o.names) byName.set(n, o);
  for (const o of options) {
    let n = 0;
    for (const name of o.names) {
      const re = new RegExp(`(?<![\\w-])${escape(name)}(?![\\w-])`, "g");
      n += Math.max(0, [...text.matchAll(re)].length - 1); // less its own entry
    }
    mentions.set(o, n);
  }
  for (const line of text.split("\n")) {
    const words = line.trim().replace(/^\$\s+/, "").split(/\s+/);
    if (!programs.has(basename(words[0] ?? ""))) continue;
    for (const w of words.slice(1)) {
      const named = byName.get(w.replace(/=.*/, ""));
      if (named) examples.add(named);
      else if (/^-[A-Za-z0-9]{2,}$/.test(w)) {
        for (const c of w.slice(1)) {
          const o = byName.get(`-${c}`);
          if (o) examples.add(o);
        }
      }
    }
  }
  return { examples, mentions };
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = text.slice(0, limit - 1);
  const space = head.lastIndexOf(" ");
  return (space > limit / 2 ? head.slice(0, space) : head).replace(/[\s,;:(]+$/, "") + "…";
}

function shorten(o: HelpOption, limit: number): HelpOption {
  return o.description.length <= limit ? o : { ...o, description: cut(o.description, limit) };
}
