// Builds the workbench into ../internal/web/dist, which is committed and
// embedded into the Go binary. `node build.mjs --check` builds in memory and
// fails when the committed files differ, so CI catches a stale bundle.
import * as esbuild from "esbuild";
import { readFileSync, writeFileSync, mkdirSync, rmSync, readdirSync, existsSync } from "node:fs";
import { join, dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "internal", "web", "dist");
const check = process.argv.includes("--check");

const result = await esbuild.build({
  // katex.css (and its fonts) is an entry of its own: the math chunk links
  // it on first use, so pages without math never download it.
  // xterm.css likewise, linked by the terminal chunk.
  entryPoints: {
    app: join(here, "src", "main.tsx"),
    katex: join(here, "node_modules", "katex", "dist", "katex.min.css"),
    xterm: join(here, "node_modules", "@xterm", "xterm", "css", "xterm.css"),
  },
  bundle: true,
  splitting: true, // math (KaTeX) is a separate chunk, loaded only when used
  format: "esm",
  target: ["es2022", "chrome110", "firefox115", "safari16"],
  minify: true,
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: out,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  assetNames: "assets/[name]-[hash]",
  // Browsers that render this UI all take woff2; the older formats KaTeX
  // also lists stay unresolved rather than tripling the embedded fonts.
  loader: { ".woff2": "file" },
  external: ["*.woff", "*.ttf"],
  write: false,
  logLevel: "warning",
  metafile: true,
});

// Files produced by this build, by path relative to dist.
const files = new Map();
for (const f of result.outputFiles) files.set(relative(out, f.path), Buffer.from(f.contents));
// esbuild writes the CSS a lazily loaded chunk imports beside the chunk,
// where no page links it: such a stylesheet is imported from main.tsx.
const unlinked = [...files.keys()].filter((n) => n.startsWith("chunks/") && n.endsWith(".css"));
if (unlinked.length) {
  console.error("stylesheets imported by lazily loaded code are never linked; import them from src/main.tsx instead:\n  " + unlinked.join("\n  "));
  process.exit(1);
}
files.set("index.html", readFileSync(join(here, "index.html")));
// A classic script the page runs before its first paint (the theme), as is.
files.set("theme.js", readFileSync(join(here, "theme.js")));

function listDir(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listDir(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

if (check) {
  const committed = new Set(listDir(out));
  const problems = [];
  for (const [name, data] of files) {
    if (!committed.has(name)) problems.push(`missing: ${name}`);
    else if (!readFileSync(join(out, name)).equals(data)) problems.push(`differs: ${name}`);
    committed.delete(name);
  }
  for (const name of committed) if (name !== ".gitkeep") problems.push(`not produced by the build: ${name}`);
  if (problems.length) {
    console.error("internal/web/dist is stale; run `make ui` and commit the result:\n  " + problems.join("\n  "));
    process.exit(1);
  }
  console.log("internal/web/dist is up to date");
} else {
  rmSync(out, { recursive: true, force: true });
  for (const [name, data] of files) {
    mkdirSync(dirname(join(out, name)), { recursive: true });
    writeFileSync(join(out, name), data);
  }
}

// Sizes of what the first page load needs, gzipped: the page, the theme
// script, the entry's JS and CSS, and every chunk the entry imports
// statically (shared code esbuild split out of it), not those loaded with
// import() on first use.
const outputs = new Map(Object.entries(result.metafile.outputs).map(([k, v]) => [relative(out, join(process.cwd(), k)), v]));
const needed = new Set(["index.html", "theme.js", "app.css"]);
const walk = (name) => {
  if (needed.has(name)) return;
  needed.add(name);
  for (const imp of outputs.get(name)?.imports ?? []) {
    if (imp.kind === "import-statement") walk(relative(out, join(process.cwd(), imp.path)));
  }
};
walk("app.js");
let initial = 0;
for (const name of needed) initial += gzipSync(files.get(name), { level: 9 }).length;
const shared = [...needed].filter((n) => n.startsWith("chunks/"));
console.log(`initial load (index.html + theme.js + app.js + app.css${shared.length ? ` + ${shared.length} shared chunk${shared.length > 1 ? "s" : ""}` : ""}), gzipped: ${(initial / 1024).toFixed(1)} KB`);
