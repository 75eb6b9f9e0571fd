// Opens each .vsix and checks what VS Code will install: the manifest and its main file,
// the target platform it declares, the bundled server with its dependencies (compiled
// modules in a platform's package, none in the universal one), and nothing that is only
// for development. Which platform the compiled modules are built for, and for which
// CPython versions, tests/test_vsix_targets.py checks.
//   node client/scripts/check-vsix.mjs                       # every package `npm run package` makes
//   node client/scripts/check-vsix.mjs servelint-linux-x64-0.1.0.vsix ...
import { existsSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { readZip } from "./zip.mjs";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
const fileName = (target) => (target === "universal" ? `servelint-${version}.vsix` : `servelint-${target}-${version}.vsix`);
const files = process.argv.length > 2 ? process.argv.slice(2) : [...TARGETS, "universal"].map(fileName);
let failed = 0;
for (const file of files) {
  if (!existsSync(file)) {
    console.error(`${file}: missing; \`npm run package\` (make client) builds it`);
    failed++;
    continue;
  }
  const target = [...TARGETS, "universal"].find((t) => file.endsWith(fileName(t)));
  failed += check(file, target) ? 0 : 1;
}
process.exit(failed ? 1 : 0);

function check(file, target) {
  const zip = readZip(file);
  const names = [...zip.entries.keys()];
  const problems = [];
  const need = (cond, what) => { if (!cond) problems.push(what); };
  const has = (name) => zip.entries.has(name);
  const libs = "extension/bundled/libs/";
  const universal = target === "universal";

  need(target, `the file name names no target: servelint-<target>-${version}.vsix or servelint-${version}.vsix`);
  if (has("extension.vsixmanifest")) {
    const identity = /<Identity\b[^>]*>/.exec(zip.read("extension.vsixmanifest").toString("utf8"))?.[0] ?? "";
    const declared = /\bTargetPlatform="([^"]*)"/.exec(identity)?.[1];
    need(universal ? declared === undefined : declared === target,
      `extension.vsixmanifest declares TargetPlatform ${declared ?? "(none)"}, the file name ${target}`);
  }
  if (has("extension/bundled/manifest.json")) {
    const bundle = JSON.parse(zip.read("extension/bundled/manifest.json").toString("utf8"));
    need(bundle.target === target, `bundled/manifest.json is for ${bundle.target}, the file name for ${target}`);
  } else {
    problems.push("extension/bundled/manifest.json missing");
  }

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
    "pygls/__init__.py", "lsprotocol/__init__.py", "attrs/__init__.py", "cattrs/__init__.py", "typing_extensions.py",
    "tomli/__init__.py", "exceptiongroup/__init__.py",
    ...(universal ? [] : ["yaml/__init__.py", "tree_sitter/__init__.py", "tree_sitter_bash/__init__.py"]),
  ]) {
    need(has(libs + f), `bundled ${f} missing`);
  }
  need(names.some((n) => n.startsWith(libs + "servelint/rules/packs/")), "bundled rule packs missing");
  if (universal) {
    // Pure Python only: the environment's PyYAML and tree-sitter are imported instead.
    const compiled = names.filter((x) => /\.(so|pyd|dylib|dll)$/.test(x));
    if (compiled.length) {
      problems.push(`${compiled.length} compiled module(s), the universal package has none: ${compiled.slice(0, 5).join(", ")}`);
    }
    const folders = new Set(names.map((x) => /^extension\/bundled\/libs\/(yaml|_yaml|tree_sitter|tree_sitter_bash)\//.exec(x)?.[1]));
    folders.delete(undefined);
    for (const f of folders) {
      problems.push(`bundled/libs/${f}/: the universal package takes ${f} from the environment, it must not bundle it`);
    }
  } else {
    for (const [folder, module] of [["tree_sitter", "_binding"], ["tree_sitter_bash", "_binding"], ["yaml", "_yaml"]]) {
      need(names.some((n) => n.startsWith(`${libs}${folder}/${module}.`) && /\.(so|pyd)$/.test(n)),
        `${folder}'s compiled module missing`);
    }
  }

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
  need(zip.size > 0.5e6 && zip.size < 40e6, `size ${mb.toFixed(1)} MB is not between 0.5 and 40 MB`);
  need(names.length < 1000, `${names.length} files: more than expected`);

  if (problems.length) {
    console.error(`${file}: ${problems.length} problem(s)`);
    for (const p of problems.slice(0, 50)) {
      console.error("  " + p);
    }
    return false;
  }
  console.log(`${file}: ok (${target}, ${names.length} files, ${mb.toFixed(1)} MB, main ${manifest.main})`);
  return true;
}
