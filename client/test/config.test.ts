import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";

import {
  DEFAULT_SETTINGS, expandVariables, folderForScope, fromObject, importStrategy, initializationOptions,
  interpreterSetting, logLevel, pathSetting, resolvePath, serverSettings, startFolder,
} from "../src/config";

const folder = path.join(os.tmpdir(), "proj");

test("missing settings get the documented defaults", () => {
  const s = serverSettings(fromObject({}), folder, true);
  assert.deepEqual(s, DEFAULT_SETTINGS);
  assert.equal(s.sglangVersion, "auto");
  assert.equal(s.maxFileBytes, 5242880);
  assert.equal(s.configurationPreference, "editorFirst");
  assert.equal(s.showNotifications, "onWarning");
  // Defaults are copies: changing one result does not change the next.
  s.select.push("SL0");
  assert.deepEqual(serverSettings(fromObject({}), folder, true).select, []);
});

test("settings become initializationOptions with trust and client name", () => {
  const raw = {
    enable: false, select: ["SL0"], ignore: ["SL004"], severity: { SL004: "information" },
    rulePacks: ["rules/team.yaml", "${workspaceFolder}/more", "/abs/pack.json", " "],
    sglangVersion: "0.5.23", targetVersion: "latest", gpu: "sm90", maxFileBytes: 1000,
    configurationPreference: "editorOnly", ignoreSuppressions: true, showNotifications: "always",
    interpreter: ["/usr/bin/python3"], importStrategy: "fromEnvironment", "trace.server": "verbose",
    path: ["/x/servelint"], logLevel: "debug",
  };
  const opts = initializationOptions(serverSettings(fromObject(raw), folder, true), true);
  assert.deepEqual(opts, {
    settings: {
      enable: false, select: ["SL0"], ignore: ["SL004"], severity: { SL004: "information" },
      rulePacks: [path.join(folder, "rules/team.yaml"), `${folder}/more`, "/abs/pack.json"],
      sglangVersion: "0.5.23", targetVersion: "latest", gpu: "sm90", maxFileBytes: 1000,
      configurationPreference: "editorOnly", ignoreSuppressions: true, showNotifications: "always",
    },
    workspaceTrusted: true,
    clientName: "vscode",
  });
  // Client-only settings are not sent to the server.
  assert.ok(!("interpreter" in opts.settings));
  assert.ok(!("importStrategy" in opts.settings));
  assert.ok(!("path" in opts.settings));
  assert.ok(!("logLevel" in opts.settings));
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

test("servelint.path: expanded, relative paths from the folder, ignored when blank or untrusted", () => {
  const src = fromObject({ path: ["${userHome}/.local/bin/servelint", "--x"] });
  assert.deepEqual(pathSetting(fromObject({ path: ["~/.local/bin/servelint"] }), "/w", true),
    [path.join(os.homedir(), ".local/bin/servelint")]);
  assert.deepEqual(pathSetting(src, "/w", true), [`${os.homedir()}/.local/bin/servelint`, "--x"]);
  assert.deepEqual(pathSetting(src, "/w", false), []);
  assert.deepEqual(pathSetting(fromObject({ path: "${workspaceFolder}/.venv/bin/servelint" }), "/w", true), ["/w/.venv/bin/servelint"]);
  assert.deepEqual(pathSetting(fromObject({ path: [".venv/bin/servelint"] }), "/w", true), [path.join("/w", ".venv/bin/servelint")]);
  // A bare name is looked up on PATH, not in the folder.
  assert.deepEqual(pathSetting(fromObject({ path: ["servelint"] }), "/w", true), ["servelint"]);
  assert.deepEqual(pathSetting(fromObject({ path: [] }), "/w", true), []);
  assert.deepEqual(pathSetting(fromObject({ path: [" "] }), "/w", true), []);
  assert.deepEqual(pathSetting(fromObject({ path: 3 }), "/w", true), []);
  assert.deepEqual(pathSetting(fromObject({}), "/w", true), []);
});

test("log level: one of error, warning, info, debug; warning otherwise", () => {
  assert.equal(logLevel(fromObject({})), "warning");
  for (const l of ["error", "warning", "info", "debug"]) {
    assert.equal(logLevel(fromObject({ logLevel: l })), l);
  }
  assert.equal(logLevel(fromObject({ logLevel: "verbose" })), "warning");
  assert.equal(logLevel(fromObject({ logLevel: 3 })), "warning");
});

test("multi-root: a scope gets its own folder, else the only folder, else none", () => {
  assert.equal(folderForScope("b", ["a", "b"]), "b");
  assert.equal(folderForScope(undefined, ["a", "b"]), undefined);
  assert.equal(folderForScope(undefined, ["a"]), "a");
  assert.equal(folderForScope(undefined, []), undefined);
});

test("multi-root: the server starts with the active document's folder, else the first opened one's", () => {
  assert.equal(startFolder("b", ["a"], ["a"], ["a", "b"]), "b");
  assert.equal(startFolder(undefined, [undefined, "b"], ["a", "b"], ["a", "b"]), "b");
  assert.equal(startFolder(undefined, [], [undefined, "b"], ["a", "b"]), "b");
  assert.equal(startFolder(undefined, [], [], ["a", "b"]), "a");
  assert.equal(startFolder(undefined, [], [], []), undefined);
});
