import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";

import { bundleMismatch, LaunchInput, prependPythonPath, serverCommand } from "../src/launch";

const base: LaunchInput = {
  interpreter: ["/usr/bin/python3"],
  strategy: "useBundled",
  environmentHasServelint: false,
  bundledLibs: "/ext/bundled/libs",
  extensionRoot: "/ext",
  baseEnv: { PATH: "/usr/bin", PYTHONPATH: "/mine" },
  platform: "linux",
};

test("bundled: python -m servelint lsp with the bundled libs first on PYTHONPATH", () => {
  const plan = serverCommand(base);
  assert.equal(plan.command, "/usr/bin/python3");
  assert.deepEqual(plan.args, ["-m", "servelint", "lsp"]);
  assert.equal(plan.env.PYTHONPATH, `${path.resolve("/ext/bundled/libs")}:/mine`);
  assert.equal(plan.env.PATH, "/usr/bin");
  assert.equal(plan.uses, "bundled");
  assert.equal(plan.warning, undefined);
  // Never the workspace as working directory: `-m` would import from it.
  assert.equal(plan.cwd, "/ext");
  // The base environment is copied, not changed.
  assert.equal(base.baseEnv.PYTHONPATH, "/mine");
});

test("extra interpreter arguments come before -m", () => {
  const plan = serverCommand({ ...base, interpreter: ["py", "-3.12"] });
  assert.equal(plan.command, "py");
  assert.deepEqual(plan.args, ["-3.12", "-m", "servelint", "lsp"]);
});

test("fromEnvironment uses the environment's servelint and leaves PYTHONPATH alone", () => {
  const plan = serverCommand({ ...base, strategy: "fromEnvironment", environmentHasServelint: true });
  assert.equal(plan.uses, "environment");
  assert.equal(plan.env.PYTHONPATH, "/mine");
  assert.equal(plan.warning, undefined);
});

test("fromEnvironment without servelint installed falls back to bundled with a warning", () => {
  const plan = serverCommand({ ...base, strategy: "fromEnvironment", environmentHasServelint: false });
  assert.equal(plan.uses, "bundled");
  assert.match(plan.env.PYTHONPATH ?? "", /bundled/);
  assert.match(plan.warning ?? "", /not installed in \/usr\/bin\/python3's environment.*bundled/);
});

test("PYTHONPATH building", () => {
  assert.equal(prependPythonPath("/b", undefined, "linux"), "/b");
  assert.equal(prependPythonPath("/b", "", "linux"), "/b");
  assert.equal(prependPythonPath("/b", "/x:/b:/y", "linux"), "/b:/x:/y");
  assert.equal(prependPythonPath("C:\\b", "C:\\x", "win32"), "C:\\b;C:\\x");
});

test("Windows keeps the environment's own spelling of PYTHONPATH", () => {
  const plan = serverCommand({ ...base, platform: "win32", baseEnv: { PythonPath: "C:\\mine" } });
  assert.deepEqual(Object.keys(plan.env).filter((k) => k.toUpperCase() === "PYTHONPATH"), ["PythonPath"]);
  assert.match(plan.env.PythonPath ?? "", /;C:\\mine$/);
});

test("the bundle's Python versions are checked against the interpreter", () => {
  const manifest = { platform: "linux-x86_64", pythons: ["3.10", "3.11", "3.12", "3.13", "3.14"] };
  assert.equal(bundleMismatch(manifest, [3, 12, 1]), undefined);
  assert.match(bundleMismatch(manifest, [3, 15, 0]) ?? "", /CPython 3\.10, 3\.11, 3\.12, 3\.13, 3\.14 on linux-x86_64, not for Python 3\.15/);
  assert.equal(bundleMismatch(undefined, [3, 15, 0]), undefined);
  assert.equal(bundleMismatch({}, [3, 15, 0]), undefined);
});
