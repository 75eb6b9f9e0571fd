// Bundles the extension (client/src/extension.ts and everything it imports, including
// vscode-languageclient) into one file, dist/extension.js, so the .vsix needs no node_modules.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const production = process.argv.includes("--production") || process.env.NODE_ENV === "production";

await build({
  absWorkingDir: root,
  entryPoints: ["client/src/extension.ts"],
  outfile: "dist/extension.js",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  sourcemap: !production,
  minify: production,
  logLevel: "warning",
});
console.log("built dist/extension.js");
