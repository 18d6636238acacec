/**
 * An MCP server's `elicitation/create` form, asked of the person one field at a time through
 * the call's question channel (SPEC S3.6, the same one `$MAGI_ASK` and Lua `{ask=…}` reach).
 * Choices come from `enum` and titled `oneOf`/`anyOf` consts; `yes`/`no` for booleans; a
 * multi-select takes answers separated by commas. An optional field with a default is not
 * asked (the default is sent); an empty answer gives the default, or leaves the field out.
 *
 * @module
 */
import type { Question } from "../../core/types.ts";

/** Asks the person one question; undefined when no one can answer. */
export type Ask = (question: Question) => Promise<string | undefined>;

/** What an elicitation form asks for (MCP `requestedSchema`). */
export interface FormSchema {
  properties?: Record<string, FieldSchema>;
  required?: string[];
}

/** One field of a form: a primitive, an enum, or a multi-select. */
export interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const?: unknown; title?: string }[];
  anyOf?: { const?: unknown; title?: string }[];
  items?: { enum?: unknown[]; anyOf?: { const?: unknown; title?: string }[] };
}

/** The elicitation result: accepted content, or declined when a question went unanswered. */
export type FormResult =
  | { action: "accept"; content: Record<string, unknown> }
  | { action: "decline" };

/** Labels the person picks from, and the value each stands for. */
function options(field: FieldSchema): { label: string; value: unknown }[] | undefined {
  const titled = field.oneOf ?? field.anyOf ?? field.items?.anyOf;
  if (titled?.length) {
    return titled.map((o) => ({ label: o.title ?? String(o.const), value: o.const }));
  }
  const values = field.enum ?? field.items?.enum;
  if (values?.length) {
    return values.map((v, i) => ({ label: field.enumNames?.[i] ?? String(v), value: v }));
  }
  if (field.type === "boolean") {
    return [{ label: "yes", value: true }, { label: "no", value: false }];
  }
  return undefined;
}

function convert(field: FieldSchema, text: string): unknown {
  const picks = options(field);
  const pick = (t: string) => picks?.find((o) => o.label === t)?.value ?? t;
  if (field.type === "array") {
    return text.split(",").map((t) => pick(t.trim())).filter((t) => t !== "");
  }
  if (picks) return pick(text);
  if (field.type === "number" || field.type === "integer") {
    const n = Number(text);
    return text.trim() !== "" && Number.isFinite(n) ? n : text;
  }
  return text;
}

/**
 * Fills in a form by asking its fields in order.
 *
 * @param message the server's message, shown with each question
 */
export async function answerForm(
  message: string,
  schema: FormSchema,
  ask: Ask,
): Promise<FormResult> {
  const content: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    if (!required.has(name) && field.default !== undefined) {
      content[name] = field.default;
      continue;
    }
    const label = field.title ?? name;
    const picks = options(field);
    const multi = field.type === "array";
    const hints = [
      field.description,
      multi && picks
        ? `one or more of ${picks.map((o) => o.label).join(", ")}, separated by commas`
        : "",
      field.default !== undefined ? `empty for ${JSON.stringify(field.default)}` : "",
    ].filter(Boolean).join("; ");
    const question: Question = {
      question: `${message}\n${label}${hints ? ` (${hints})` : ""}`,
      ...(picks && !multi ? { choices: picks.map((o) => o.label) } : {}),
    };
    const answer = await ask(question);
    if (answer === undefined) return { action: "decline" };
    if (answer.trim() === "") {
      if (field.default !== undefined) content[name] = field.default;
      continue;
    }
    content[name] = convert(field, answer.trim());
  }
  return { action: "accept", content };
}
