import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";

import {
  DEFAULT_SETTINGS, expandVariables, fromObject, importStrategy, initializationOptions,
  interpreterSetting, resolvePath, serverSettings,
} from "../src/config";

const folder = path.join(os.tmpdir(), "proj");

test("missing settings get the documented defaults", () => {
  const s = serverSettings(fromObject({}), folder, true);
  assert.deepEqual(s, DEFAULT_SETTINGS);
  assert.equal(s.sglangVersion, "0.5.23");
  assert.equal(s.maxFileBytes, 5242880);
  assert.equal(s.configurationPreference, "editorFirst");
  // Defaults are copies: changing one result does not change the next.
  s.select.push("SL0");
  assert.deepEqual(serverSettings(fromObject({}), folder, true).select, []);
});

test("settings become initializationOptions with trust and client name", () => {
  const raw = {
    enable: false, select: ["SL0"], ignore: ["SL004"], severity: { SL004: "information" },
    rulePacks: ["rules/team.yaml", "${workspaceFolder}/more", "/abs/pack.json", " "],
    sglangVersion: "0.5.23", gpu: "sm90", maxFileBytes: 1000,
    configurationPreference: "editorOnly", ignoreSuppressions: true,
    interpreter: ["/usr/bin/python3"], importStrategy: "fromEnvironment", "trace.server": "verbose",
  };
  const opts = initializationOptions(serverSettings(fromObject(raw), folder, true), true);
  assert.deepEqual(opts, {
    settings: {
      enable: false, select: ["SL0"], ignore: ["SL004"], severity: { SL004: "information" },
      rulePacks: [path.join(folder, "rules/team.yaml"), `${folder}/more`, "/abs/pack.json"],
      sglangVersion: "0.5.23", gpu: "sm90", maxFileBytes: 1000,
      configurationPreference: "editorOnly", ignoreSuppressions: true,
    },
    workspaceTrusted: true,
    clientName: "vscode",
  });
  // Client-only settings are not sent to the server.
  assert.ok(!("interpreter" in opts.settings));
  assert.ok(!("importStrategy" in opts.settings));
});

test("an untrusted workspace sends no rule packs and workspaceTrusted false", () => {
  const s = serverSettings(fromObject({ rulePacks: ["/abs/pack.yaml"], select: ["SL002"] }), folder, false);
  assert.deepEqual(s.rulePacks, []);
  assert.deepEqual(s.select, ["SL002"]);
  assert.equal(initializationOptions(s, false).workspaceTrusted, false);
});

test("malformed values pass through for the server to report", () => {
  const s = serverSettings(fromObject({ select: "SL002", rulePacks: 7 }), folder, true);
  assert.equal(s.select as unknown, "SL002");
  assert.equal(s.rulePacks as unknown, 7);
});

test("variables in paths", () => {
  assert.equal(expandVariables("${workspaceFolder}/.venv/bin/python", "/w"), "/w/.venv/bin/python");
  assert.equal(expandVariables("${userHome}/py", "/w", {}, "/home/u"), "/home/u/py");
  assert.equal(expandVariables("~/py", "/w", {}, "/home/u"), "/home/u/py");
  assert.equal(expandVariables("${env:PYROOT}/bin/python", "/w", { PYROOT: "/opt/py" }), "/opt/py/bin/python");
  assert.equal(expandVariables("${env:NOPE}x", "/w", {}), "x");
  // Without a folder, ${workspaceFolder} stays as written (and will fail visibly).
  assert.equal(expandVariables("${workspaceFolder}/x", undefined), "${workspaceFolder}/x");
  assert.equal(resolvePath("packs", "/w"), path.join("/w", "packs"));
  assert.equal(resolvePath("packs", undefined), "packs");
});

test("interpreter setting: expanded, ignored when blank or untrusted", () => {
  const src = fromObject({ interpreter: ["${workspaceFolder}/.venv/bin/python", "-X", "utf8"] });
  assert.deepEqual(interpreterSetting(src, "/w", true), ["/w/.venv/bin/python", "-X", "utf8"]);
  assert.deepEqual(interpreterSetting(src, "/w", false), []);
  assert.deepEqual(interpreterSetting(fromObject({ interpreter: [] }), "/w", true), []);
  assert.deepEqual(interpreterSetting(fromObject({ interpreter: [""] }), "/w", true), []);
  assert.deepEqual(interpreterSetting(fromObject({ interpreter: "/usr/bin/python3" }), "/w", true), ["/usr/bin/python3"]);
});

test("import strategy: bundled unless trusted and fromEnvironment", () => {
  assert.equal(importStrategy(fromObject({}), true), "useBundled");
  assert.equal(importStrategy(fromObject({ importStrategy: "fromEnvironment" }), true), "fromEnvironment");
  assert.equal(importStrategy(fromObject({ importStrategy: "fromEnvironment" }), false), "useBundled");
  assert.equal(importStrategy(fromObject({ importStrategy: "bogus" }), true), "useBundled");
});
