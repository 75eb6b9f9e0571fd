import * as fs from "node:fs";
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
