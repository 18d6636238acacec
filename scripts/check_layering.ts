/**
 * The import graph of lib/, checked against the folders' declared order: a folder imports
 * only from itself and the folders before it (lib/core first). Reports every import against
 * the order, every circle of modules (static imports, `import type` included: a type import
 * still ties the folders' meanings; modules loaded by URL count too) and every module outside
 * the folders.
 *
 * Run: `deno task layering` (part of `deno task ok` and CI); exits 1 when anything is
 * reported.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/**
 * The folders, first to last: each may import from those before it. Files straight under
 * lib/ (runtime.ts, shipped.ts, …) are the folder "lib".
 */
export const ORDER = [
  "lib/core",
  "lib/config",
  "lib/registry",
  "lib/exec",
  "lib/confinement",
  "lib/policy",
  "lib/pipeline",
  "lib/sources",
  "lib/runtime",
  "lib/agent",
  "lib/terminal",
  "lib/mcp",
  "lib/scaffold",
  "lib/cli",
];

/** A file named from the repository's folder: `sourceUrl("lib/…")` (group 1: the path). */
export const SOURCE_URL = /sourceUrl\(\s*["'](lib\/[^"']+\.(?:ts|js))["']\s*\)/g;

/**
 * The relative imports of a TypeScript file: static ones (`import … from "./x.ts"`,
 * `export … from`, `import "./x.ts"`) and the modules it loads late or starts as a Worker
 * (`new URL("./x.ts", import.meta.url)`, or `sourceUrl("lib/x/y.ts")` from the repository's
 * folder: lib/core/source_root.ts): a module loaded by URL still ties the folders.
 */
export function importsOf(text: string): string[] {
  const found: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']/g;
  for (const m of text.matchAll(re)) found.push(m[1]);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g)) found.push(m[1]);
  const late = /new URL\(\s*["'](\.{1,2}\/[^"']+\.ts)["'],\s*import\.meta\.url\s*\)/g;
  for (const m of text.matchAll(late)) found.push(m[1]);
  for (const m of text.matchAll(SOURCE_URL)) found.push(m[1]);
  return found;
}

function* tsFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* tsFiles(path);
    else if (/\.ts$/.test(entry.name)) yield path;
  }
}

/** The folder of ORDER a file belongs to: the longest one that holds it. */
export function folderOf(file: string): string | undefined {
  const dir = dirname(file);
  return ORDER.filter((f) => dir === f || dir.startsWith(f + "/"))
    .sort((a, b) => b.length - a.length)[0];
}

/** Module → the modules it imports (paths relative to the repo). */
export function importGraph(root = REPO): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  {
    for (const path of tsFiles(join(root, "lib"))) {
      const from = relative(root, path);
      const targets = importsOf(Deno.readTextFileSync(path))
        .map((spec) =>
          spec.startsWith("lib/") ? spec : relative(root, resolve(dirname(path), spec))
        )
        .filter((t) => t.startsWith("lib/"));
      graph.set(from, [...new Set(targets)]);
    }
  }
  return graph;
}

/** Modules of lib/ that lie in none of ORDER's folders (a file straight under lib/). */
export function outsideFolders(graph: Map<string, string[]>): string[] {
  return [...graph.keys()].filter((m) => !folderOf(m)).sort();
}

/** Imports that go from a folder to one after it in ORDER: "from → to". */
export function againstOrder(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    for (const to of targets) {
      const b = folderOf(to);
      if (a && b && a !== b && ORDER.indexOf(b) > ORDER.indexOf(a)) out.push(`${from} → ${to}`);
    }
  }
  return out.sort();
}

/** The circles of the graph: each strongly connected set of two or more modules (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) out.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

if (import.meta.main) {
  const graph = importGraph();
  const against = againstOrder(graph);
  const found = circles(graph);
  const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
  console.log(`${graph.size} modules, ${edges} imports; folder order: ${ORDER.join(" < ")}`);
  console.log(`${found.length} circle(s):`);
  for (const c of found) console.log(`  ${c.join(" ↔ ")}`);
  console.log(`${against.length} import(s) against the order:`);
  for (const line of against) console.log(`  ${line}`);
  const loose = outsideFolders(graph);
  if (loose.length) {
    console.log(`${loose.length} module(s) outside the folders: ${loose.join(", ")}`);
  }
  if (found.length > 0 || against.length > 0 || loose.length > 0) Deno.exit(1);
}
