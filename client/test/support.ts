import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The repository root (client/out/test/ -> ../../..). */
export const ROOT = path.resolve(__dirname, "..", "..", "..");

/** The Python with servelint installed: $SERVELINT_PYTHON, else the repository's .venv. */
export function testPython(): string {
  if (process.env.SERVELINT_PYTHON) {
    return process.env.SERVELINT_PYTHON;
  }
  const venv = process.platform === "win32"
    ? path.join(ROOT, ".venv", "Scripts", "python.exe")
    : path.join(ROOT, ".venv", "bin", "python");
  if (!fs.existsSync(venv)) {
    throw new Error(`no ${venv}: run \`make install-test\` or set SERVELINT_PYTHON`);
  }
  return venv;
}

/** Builds the bundle of a VS Code target (client/scripts/bundle_server.py bundle, offline
 * from client/.wheelhouse/<target>) into a new temporary extension folder; returns that
 * folder (its bundled/libs and bundled/manifest.json are the target's). */
export function buildBundle(target: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `servelint-ext-${target}-`));
  const built = spawnSync(testPython(), [path.join(ROOT, "client", "scripts", "bundle_server.py"), "bundle",
    "--target", target, "--dest", path.join(root, "bundled")], { encoding: "utf8" });
  if (built.status !== 0) {
    fs.rmSync(root, { recursive: true, force: true });
    throw new Error(`bundling ${target} failed (exit ${built.status}); \`make wheelhouse\` fetches the wheels ` +
      `it needs:\n${built.stdout}${built.stderr}`);
  }
  return root;
}
