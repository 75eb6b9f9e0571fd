import { test } from "node:test";
import * as assert from "node:assert/strict";

import { formatLintSummary, LINT_WORKSPACE_COMMAND } from "../src/summary";

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
