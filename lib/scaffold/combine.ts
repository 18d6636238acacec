/**
 * One model of a program from everything `magi new` read: its `--help`, the fuller help the
 * text points to (`--help all`), and its manual page. The help's own entries win (their
 * descriptions are written to be short); the page adds spellings (`-c` gains
 * `--compact-output`), values the help left out, and the options the help does not list.
 *
 * @module
 */
import type { HelpModel, HelpOption } from "./help_parse.ts";
import { parseHelp } from "./help_parse.ts";
import { manAsHelp, type ManPage } from "./man.ts";

/** What the sources say together. */
export interface Combined {
  model: HelpModel;
  /**
   * Option flags the program's first help page shows when a fuller one was read too (curl's
   * `--help` lists the options people use; `--help all` lists 250): a sign of use.
   */
  featured: Set<string>;
  /** Text where examples and synopses show options in use: the page's SYNOPSIS and EXAMPLES. */
  usageText: string;
  /** The page's option sections, where options refer to each other ("See also -k"). */
  references: string;
}

/**
 * Combines the help models and a manual page.
 *
 * @param help the model of the first help text, if any printed one
 * @param full the model of the fuller help (`--help all`), if the first pointed to one
 * @param man the manual page, if one is installed
 * @param words the command line, such as `["git", "commit"]`
 */
export function combine(
  help: HelpModel | undefined,
  full: HelpModel | undefined,
  man: ManPage | undefined,
  words: readonly string[],
): Combined {
  const featured = new Set<string>();
  let base = help;
  if (full && help && full.options.length > help.options.length) {
    for (const o of help.options) for (const n of o.names) featured.add(n);
    // The fuller text's options; the first text's usage line (curl's `--help all` runs its
    // usage line into the option list).
    base = {
      ...full,
      summary: help.summary ?? full.summary,
      usage: help.usage ?? full.usage,
      positionals: help.positionals ?? full.positionals,
      forms: help.forms,
      skipped: [
        ...help.skipped.filter((s) => !s.what.startsWith("option line")),
        ...full.skipped.filter((s) => s.what.startsWith("option line")),
      ],
    };
  }
  const manModel = man ? parseHelp(manAsHelp(man), words, { strict: true }) : undefined;
  const usageText = [
    ...(man?.synopsis ?? []),
    ...(man?.examples ?? []),
  ].join("\n");
  const references = (man?.options ?? []).join("\n");
  if (!base) {
    const model: HelpModel = manModel ?? {
      style: "unknown",
      forms: 0,
      options: [],
      positionals: null,
      skipped: [],
    };
    if (man?.name) model.summary = sentence(man.name);
    return { model: { ...model, style: "man" }, featured, usageText, references };
  }
  const model: HelpModel = {
    ...base,
    options: base.options.map((o) => ({ ...o, names: [...o.names] })),
    skipped: [...base.skipped],
  };
  if (!model.summary && man?.name) model.summary = sentence(man.name);
  if (manModel) {
    const byName = new Map<string, HelpOption>();
    for (const o of model.options) for (const n of o.names) byName.set(n, o);
    for (const m of manModel.options) {
      const match = m.names.map((n) => byName.get(n)).find((o) => o !== undefined);
      if (match) {
        for (const n of m.names) {
          if (!match.names.includes(n) && !byName.has(n)) {
            match.names.push(n);
            byName.set(n, match);
          }
        }
        if (!match.flag.startsWith("--")) {
          match.flag = match.names.find((n) => n.startsWith("--")) ?? match.flag;
        }
        if (!match.value && m.value && !/^-[^-]$/.test(match.flag)) match.value = m.value;
        else if (!match.value && m.value) match.value = m.value;
        if (match.value && m.value && match.value.type === "string" && m.value.type !== "string") {
          match.value = { ...match.value, type: m.value.type };
        }
        // A synopsis-only entry (`The -q option`) takes the page's text.
        if (!match.description || /^The \S+ option\b/.test(match.description)) {
          match.description = m.description || match.description;
        }
        // An option taken from the help's own skipped list is now typed.
        model.skipped = model.skipped.filter((s) =>
          !(s.what.startsWith("option line") && m.names.some((n) => s.what.includes(`"${n}`)))
        );
      } else {
        model.options.push(m);
        for (const n of m.names) byName.set(n, m);
      }
    }
    if (model.positionals === null && manModel.positionals !== null && !model.usage) {
      model.positionals = manModel.positionals;
      model.usage = manModel.usage;
    }
  }
  return { model, featured, usageText, references };
}

/** A NAME line as a description: `search for files` → `Search for files`. */
function sentence(text: string): string {
  const t = text.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return t.charAt(0).toUpperCase() + t.slice(1);
}
