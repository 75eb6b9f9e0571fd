import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import {
  checkInterpreter, findInterpreter, interpreterCandidates, noInterpreterMessage,
  parseProbeOutput, parseVersionString, Runner, versionAtLeast,
} from "../src/interpreter";
import { testPython } from "./support";

test("resolution order: setting, then the Python extension, then PATH", () => {
  assert.deepEqual(interpreterCandidates({ trusted: true, setting: ["/s/python", "-X", "utf8"], pythonExtension: "/env/python", platform: "linux" }),
    [{ argv: ["/s/python", "-X", "utf8"], source: "setting" }]);
  assert.deepEqual(interpreterCandidates({ trusted: true, setting: [], pythonExtension: "/env/python", platform: "linux" }),
    [{ argv: ["/env/python"], source: "pythonExtension" }, { argv: ["python3"], source: "path" }]);
  assert.deepEqual(interpreterCandidates({ trusted: true, setting: [], platform: "linux" }),
    [{ argv: ["python3"], source: "path" }]);
  assert.deepEqual(interpreterCandidates({ trusted: true, setting: [], platform: "win32" }),
    [{ argv: ["python3"], source: "path" }, { argv: ["python"], source: "path" }]);
});

test("an untrusted workspace uses only python3 from PATH", () => {
  assert.deepEqual(interpreterCandidates({ trusted: false, setting: ["/ws/.venv/bin/python"], pythonExtension: "/ws/.venv/bin/python", platform: "linux" }),
    [{ argv: ["python3"], source: "path" }]);
});

test("version parsing and comparison", () => {
  assert.deepEqual(parseVersionString("Python 3.11.7"), [3, 11, 7]);
  assert.deepEqual(parseVersionString("3.10"), [3, 10, 0]);
  assert.equal(parseVersionString("no version here"), undefined);
  assert.equal(versionAtLeast([3, 10, 0]), true);
  assert.equal(versionAtLeast([3, 14, 1]), true);
  assert.equal(versionAtLeast([4, 0, 0]), true);
  assert.equal(versionAtLeast([3, 9, 18]), false);
  assert.equal(versionAtLeast([2, 7, 18]), false);
  assert.deepEqual(parseProbeOutput('noise\nSERVELINT-PROBE {"version": [3, 12, 1], "executable": "/p", "servelint": true}\n'),
    { version: [3, 12, 1], executable: "/p", hasServelint: true });
  assert.equal(parseProbeOutput("SERVELINT-PROBE {not json"), undefined);
  assert.equal(parseProbeOutput('SERVELINT-PROBE {"version": "3.12"}'), undefined);
  assert.equal(parseProbeOutput("Python 3.12"), undefined);
});

test("a real interpreter passes the check", async () => {
  const python = testPython();
  const outcome = await checkInterpreter({ argv: [python], source: "setting" }, os.tmpdir());
  assert.equal(outcome.ok, true, outcome.ok ? "" : outcome.reason);
  if (outcome.ok) {
    assert.ok(versionAtLeast(outcome.probe.version));
    assert.ok(outcome.probe.executable.length > 0);
  }
});

test("a broken interpreter path gives a clear error", async () => {
  const missing = path.join(os.tmpdir(), "servelint-no-such-dir", "bin", "python");
  const outcome = await checkInterpreter({ argv: [missing], source: "setting" }, os.tmpdir());
  assert.equal(outcome.ok, false);
  if (!outcome.ok) {
    assert.equal(outcome.reason, `${missing} was not found`);
  }
  const { found, failures } = await findInterpreter([{ argv: [missing], source: "setting" }], os.tmpdir());
  assert.equal(found, undefined);
  const message = noInterpreterMessage(failures, true);
  assert.match(message, /servelint\.interpreter cannot run the servelint server/);
  assert.ok(message.includes(`${missing} was not found`));
  assert.match(message, /Set servelint\.interpreter to a Python 3\.10\+ interpreter/);
});

test("a file that is not a Python interpreter is refused", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "servelint-fake-"));
  const notPython = path.join(dir, "python");
  fs.writeFileSync(notPython, "#!/bin/sh\necho 'something else' >&2\nexit 3\n", { mode: 0o755 });
  const old = path.join(dir, "python3.8");
  fs.writeFileSync(old, "#!/bin/sh\necho 'SERVELINT-PROBE {\"version\": [3, 8, 10], \"executable\": \"/old\", \"servelint\": false}'\n", { mode: 0o755 });
  const text = path.join(dir, "readme.txt");
  fs.writeFileSync(text, "not executable", { mode: 0o644 });
  try {
    const a = await checkInterpreter({ argv: [notPython], source: "setting" }, dir);
    assert.equal(a.ok, false);
    assert.match(a.ok ? "" : a.reason, /is not a working Python interpreter \(exit 3: something else\)/);
    const b = await checkInterpreter({ argv: [old], source: "setting" }, dir);
    assert.match(b.ok ? "" : b.reason, /is Python 3\.8\.10; servelint needs 3\.10 or newer/);
    // Without any execute bit even root cannot run it.
    const c = await checkInterpreter({ argv: [text], source: "setting" }, dir);
    assert.match(c.ok ? "" : c.reason, /is not executable/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the first usable candidate wins; failures before it are reported", async () => {
  const calls: string[] = [];
  const run: Runner = async (command) => {
    calls.push(command);
    if (command === "/env/python") {
      return { code: 1, stdout: "", stderr: "Python 3.9.2\n" };
    }
    return { code: 0, stdout: 'SERVELINT-PROBE {"version": [3, 11, 2], "executable": "/usr/bin/python3", "servelint": false}\n', stderr: "" };
  };
  const { found, failures } = await findInterpreter(
    interpreterCandidates({ trusted: true, setting: [], pythonExtension: "/env/python", platform: "linux" }), "/ext", run);
  assert.deepEqual(calls, ["/env/python", "python3"]);
  assert.equal(found?.candidate.source, "path");
  assert.deepEqual(found?.probe.version, [3, 11, 2]);
  assert.deepEqual(failures, ["/env/python is Python 3.9.2; servelint needs 3.10 or newer"]);
});

test("the probe runs only the interpreter with -c, in the given directory", async () => {
  let seen: { command: string; args: string[]; cwd: string | undefined } | undefined;
  const run: Runner = async (command, args, cwd) => {
    seen = { command, args, cwd };
    return { code: 0, stdout: 'SERVELINT-PROBE {"version": [3, 10, 0], "executable": "x", "servelint": true}', stderr: "" };
  };
  await checkInterpreter({ argv: ["py", "-3.10"], source: "setting" }, "/ext", run);
  assert.equal(seen?.command, "py");
  assert.deepEqual(seen?.args.slice(0, 2), ["-3.10", "-c"]);
  assert.equal(seen?.args.length, 3);
  assert.equal(seen?.cwd, "/ext");
});
