import { test } from "node:test";
import * as assert from "node:assert/strict";

import {
  ClientStatus, formatLintSummary, LINT_WORKSPACE_COMMAND, parseServerStatus, shortPath, STATUS_COMMAND, statusView,
} from "../src/summary";

test("the server command name", () => {
  assert.equal(LINT_WORKSPACE_COMMAND, "servelint.server.lintWorkspace");
});

test("a string reply is shown as it is", () => {
  assert.equal(formatLintSummary("  Linted 12 files: 3 findings \n"), "Linted 12 files: 3 findings");
});

test("an object reply is counted", () => {
  assert.equal(formatLintSummary({ files: 12, findings: 3 }), "servelint: linted 12 files, 3 findings.");
  assert.equal(formatLintSummary({ files: 1, findings: 1 }), "servelint: linted 1 file, 1 finding.");
  assert.equal(formatLintSummary({ files: 4, findings: 0 }), "servelint: linted 4 files, no findings.");
  assert.equal(formatLintSummary({ files: ["a", "b"], findings: [] }), "servelint: linted 2 files, no findings.");
  assert.equal(formatLintSummary({ findings: 2 }), "servelint: 2 findings.");
});

test("anything else gets a generic line", () => {
  for (const r of [null, undefined, "", 5, [], { other: 1 }]) {
    assert.equal(formatLintSummary(r), "servelint: workspace linted.");
  }
});

// --- the language status item ------------------------------------------------------

const known: ClientStatus = {
  servelint: "0.1.0", sglang: "0.5.23", python: "/usr/bin/python3.11", pythonVersion: "3.11.7",
  uses: "bundled", bundledLibs: "/ext/bundled/libs",
};

test("the status command name", () => {
  assert.equal(STATUS_COMMAND, "servelint.server.status");
});

test("status reply: string fields only", () => {
  assert.deepEqual(parseServerStatus({
    servelint: "0.1.0", sglang: "0.5.23", python: "/usr/bin/python3.11", pythonVersion: "3.11.7",
    location: "/x/servelint", other: 1,
  }), { servelint: "0.1.0", sglang: "0.5.23", python: "/usr/bin/python3.11", pythonVersion: "3.11.7", location: "/x/servelint" });
  assert.deepEqual(parseServerStatus({ servelint: 1, sglang: " " }), {});
  for (const r of [null, undefined, "x", 5, []]) {
    assert.equal(parseServerStatus(r), undefined);
  }
});

test("status from the server's answer: bundled or environment libraries by location", () => {
  const view = statusView({
    kind: "running", client: known,
    server: { servelint: "0.2.0", sglang: "0.5.30", python: "/opt/py/bin/python", pythonVersion: "3.12.1", location: "/ext/bundled/libs/servelint" },
  });
  assert.deepEqual(view, {
    text: "servelint 0.2.0 · SGLang 0.5.30", detail: "Python 3.12.1 · bundled",
    tooltip: "Python 3.12.1 /opt/py/bin/python · bundled libraries (/ext/bundled/libs/servelint)",
    error: false, busy: false,
  });
  const env = statusView({ kind: "running", client: known, server: { location: "/venv/lib/python3.12/site-packages/servelint" } });
  // Paths are in the tooltip, not in the narrow hover.
  assert.equal(env.detail, "Python 3.11.7 · environment");
  assert.equal(env.tooltip, "Python 3.11.7 /usr/bin/python3.11 · environment libraries (/venv/lib/python3.12/site-packages/servelint)");
  // A folder whose name only starts like bundled/libs is not inside it.
  const near = statusView({ kind: "running", client: known, server: { location: "/ext/bundled/libs2/servelint" } });
  assert.match(near.detail, /environment/);
});

test("status names the document's release and, in the tooltip, where it was read from", () => {
  const view = statusView({
    kind: "running", client: known,
    server: { servelint: "0.2.0", sglang: "0.4.9.post2", sglangFrom: "0.4.9.post2: image lmsysorg/sglang:v0.4.9.post2-cu126 (line 19)",
      python: "/opt/py/bin/python", pythonVersion: "3.12.1", location: "/ext/bundled/libs/servelint" },
  });
  assert.equal(view.text, "servelint 0.2.0 · SGLang 0.4.9.post2");
  assert.equal(view.tooltip, "SGLang 0.4.9.post2: image lmsysorg/sglang:v0.4.9.post2-cu126 (line 19) · "
    + "Python 3.12.1 /opt/py/bin/python · bundled libraries (/ext/bundled/libs/servelint)");
  assert.equal(parseServerStatus({ sglang: "0.4.6", sglangFrom: "0.4.6: --sglang-version" })?.sglangFrom,
    "0.4.6: --sglang-version");
});

test("status without the server's command: what the client knows", () => {
  assert.deepEqual(statusView({ kind: "running", client: known }), {
    text: "servelint 0.1.0 · SGLang 0.5.23", detail: "Python 3.11.7 · bundled",
    tooltip: "Python 3.11.7 /usr/bin/python3.11 · bundled libraries",
    error: false, busy: false,
  });
  assert.equal(statusView({ kind: "running", client: { ...known, uses: "environment" } }).detail,
    "Python 3.11.7 · environment");
  const exe = statusView({
    kind: "running",
    client: { sglang: "0.5.23", uses: "executable", executable: "/home/u/.local/bin/servelint", bundledLibs: "/ext/bundled/libs" },
  });
  assert.deepEqual(exe, {
    text: "servelint · SGLang 0.5.23", detail: "Python unknown · servelint.path",
    tooltip: "Python unknown · servelint.path (/home/u/.local/bin/servelint)",
    error: false, busy: false,
  });
});

test("status while starting and after a failed start", () => {
  assert.deepEqual(statusView({ kind: "starting" }), { text: "servelint: starting", detail: "", tooltip: "", error: false, busy: true });
  assert.deepEqual(statusView({ kind: "failed", reason: "python3 was not found" }),
    { text: "servelint: not running", detail: "python3 was not found", tooltip: "python3 was not found", error: true, busy: false });
});

test("shortPath keeps short paths and cuts long ones to their last two parts", () => {
  assert.equal(shortPath("/usr/bin/python3"), "/usr/bin/python3");
  assert.equal(shortPath("/root/.pyenv/versions/3.11.7/bin/python3"), "…/bin/python3");
  assert.equal(shortPath("C:\\Users\\me\\AppData\\Local\\Programs\\Python\\python.exe"), "…\\Python\\python.exe");
});

test("status after a fallback from bundled libraries that do not load: said short, and why in the tooltip", () => {
  const view = statusView({
    kind: "running",
    client: { ...known, uses: "environment", fallback: "bundled libraries do not load here (tree_sitter: ImportError: x)" },
    server: { location: "/venv/lib/python3.11/site-packages/servelint" },
  });
  assert.equal(view.detail, "Python 3.11.7 · environment (fallback)");
  assert.equal(view.tooltip, "Python 3.11.7 /usr/bin/python3.11 · environment libraries (/venv/lib/python3.11/site-packages/servelint): "
    + "the bundled libraries do not load here (tree_sitter: ImportError: x)");
  assert.equal(view.error, false);
});
