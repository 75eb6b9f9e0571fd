// Opens the .vsix and checks what VS Code will install: the manifest and its main file,
// the bundled server with its dependencies, and nothing that is only for development.
//   node client/scripts/check-vsix.mjs servelint-0.1.0.vsix
import { builtinModules } from "node:module";
import { readZip } from "./zip.mjs";

const file = process.argv[2] ?? "servelint-0.1.0.vsix";
const zip = readZip(file);
const names = [...zip.entries.keys()];
const problems = [];
const need = (cond, what) => { if (!cond) problems.push(what); };
const has = (name) => zip.entries.has(name);
const libs = "extension/bundled/libs/";

need(has("extension.vsixmanifest"), "extension.vsixmanifest missing");
need(has("extension/package.json"), "extension/package.json missing");
let manifest = {};
if (has("extension/package.json")) {
  manifest = JSON.parse(zip.read("extension/package.json").toString("utf8"));
  const main = "extension/" + String(manifest.main ?? "").replace(/^\.\//, "");
  need(manifest.main && has(main), `main ${manifest.main} is not in the package`);
  need(manifest.name === "servelint" && manifest.publisher, "package.json name/publisher");
  if (has(main)) {
    // Bundled by esbuild: only 'vscode' and node's own modules may be required at run time.
    const code = zip.read(main).toString("utf8");
    const required = new Set([...code.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]));
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    for (const r of required) {
      need(r === "vscode" || builtins.has(r), `${main} requires ${r}, which the package does not ship`);
    }
  }
}
need(has("extension/LICENSE") || has("extension/LICENSE.txt"), "LICENSE missing");
need(has("extension/readme.md") || has("extension/README.md"), "README missing");
for (const f of [
  "servelint/__init__.py", "servelint/cli.py", "servelint/__main__.py", "servelint/lsp/server.py",
  "servelint/catalog/data/releases.json.gz", "servelint/catalog/data/successors.json",
  "servelint/rules/bundled.json",
  // The rule pages: every diagnostic's codeDescription links the installed copy.
  "servelint/rules/pages/SL001.md", "servelint/rules/pages/SL101.md",
  "pygls/__init__.py", "lsprotocol/__init__.py", "yaml/__init__.py", "tree_sitter/__init__.py",
  "tree_sitter_bash/__init__.py", "attrs/__init__.py", "cattrs/__init__.py", "typing_extensions.py",
]) {
  need(has(libs + f), `bundled ${f} missing`);
}
need(names.some((n) => n.startsWith(libs + "servelint/rules/packs/")), "bundled rule packs missing");
need(names.some((n) => /^extension\/bundled\/libs\/tree_sitter\/_binding\..*\.(so|pyd)$/.test(n)),
  "tree_sitter's compiled module missing");
need(names.some((n) => /^extension\/bundled\/libs\/tree_sitter_bash\/_binding\..*\.(so|pyd)$/.test(n)),
  "tree_sitter_bash's compiled module missing");

const forbidden = [
  [/(^|\/)node_modules\//, "node_modules"],
  [/(^|\/)tests?\//, "a tests/ folder"],
  [/\.test\.(js|ts|mjs)$/, "a test file"],
  [/^extension\/client\//, "client sources"],
  [/(^|\/)\.venv/, "a virtual environment"],
  [/(^|\/)__pycache__\//, "__pycache__"],
  [/\.pyc$/, "compiled Python bytecode"],
  [/^extension\/server\//, "the server source tree (the bundle has its own copy)"],
  [/\.wheelhouse\//, "the wheelhouse"],
  [/\.vsix$/, "another .vsix"],
  [/\.map$/, "a source map"],
  [/(^|\/)tsconfig.*\.json$/, "tsconfig"],
];
for (const n of names) {
  for (const [re, what] of forbidden) {
    if (re.test(n)) {
      problems.push(`${n}: ${what} does not belong in the package`);
    }
  }
}
const mb = zip.size / 1e6;
need(zip.size > 1e6 && zip.size < 40e6, `size ${mb.toFixed(1)} MB is not between 1 and 40 MB`);
need(names.length < 1000, `${names.length} files: more than expected`);

if (problems.length) {
  console.error(`${file}: ${problems.length} problem(s)`);
  for (const p of problems.slice(0, 50)) {
    console.error("  " + p);
  }
  process.exit(1);
}
console.log(`${file}: ok (${names.length} files, ${mb.toFixed(1)} MB, main ${manifest.main})`);
