import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  ConfigurationRequest, createProtocolConnection, ExitNotification, InitializeRequest, InitializeResult,
  RegistrationRequest, ShutdownRequest, StreamMessageReader, StreamMessageWriter, WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";

import { fromObject, initializationOptions, LogLevel, serverSettings } from "../src/config";
import { checkInterpreter } from "../src/interpreter";
import {
  bundleMismatch, executableCommand, executableMessage, executableProblem, LaunchInput, LaunchPlan,
  prependPythonPath, serverCommand, spawnArgv,
} from "../src/launch";
import { ROOT, testPython } from "./support";

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
  assert.deepEqual(plan.args, ["-m", "servelint", "lsp", "--log-level", "warning"]);
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
  assert.deepEqual(plan.args, ["-3.12", "-m", "servelint", "lsp", "--log-level", "warning"]);
});

test("servelint.logLevel becomes --log-level", () => {
  assert.deepEqual(serverCommand({ ...base, logLevel: "debug" }).args, ["-m", "servelint", "lsp", "--log-level", "debug"]);
});

test("the spawned command line is the plan plus the --stdio vscode-languageclient appends", () => {
  const plan = serverCommand({ ...base, logLevel: "info" });
  assert.deepEqual(spawnArgv(plan), {
    command: "/usr/bin/python3", args: ["-m", "servelint", "lsp", "--log-level", "info", "--stdio"],
  });
  // The plan itself is not changed.
  assert.deepEqual(plan.args, ["-m", "servelint", "lsp", "--log-level", "info"]);
});

test("servelint.path: <path...> lsp, the environment untouched, the extension folder as cwd", () => {
  const plan = executableCommand({
    executable: ["/home/u/.local/bin/servelint", "--x"], extensionRoot: "/ext",
    baseEnv: { PATH: "/usr/bin", PYTHONPATH: "/mine" }, logLevel: "error",
  });
  assert.deepEqual(plan, {
    command: "/home/u/.local/bin/servelint", args: ["--x", "lsp", "--log-level", "error"],
    env: { PATH: "/usr/bin", PYTHONPATH: "/mine" }, cwd: "/ext", uses: "executable",
  });
  assert.deepEqual(spawnArgv(plan).args, ["--x", "lsp", "--log-level", "error", "--stdio"]);
});

test("servelint.path problems: missing, not executable, a folder, not on PATH", { skip: process.platform === "win32" }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "servelint-path-"));
  try {
    const exe = path.join(dir, "servelint");
    fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    const plain = path.join(dir, "plain");
    fs.writeFileSync(plain, "", { mode: 0o644 });
    assert.equal(executableProblem(exe, {}), undefined);
    assert.equal(executableProblem(path.join(dir, "nope"), {}), `${path.join(dir, "nope")} was not found`);
    assert.equal(executableProblem(plain, {}), `${plain} is not executable`);
    assert.equal(executableProblem(dir, {}), `${dir} is not a file`);
    assert.equal(executableProblem("servelint", { PATH: `/nonexistent:${dir}` }), undefined);
    assert.equal(executableProblem("plain", { PATH: dir }), "plain was not found on PATH");
    assert.equal(executableProblem("servelint", {}), "servelint was not found on PATH");
    assert.match(executableMessage("x was not found"), /servelint\.path cannot be started \(x was not found\)/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
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

// --- the exact command line the extension starts ---------------------------------------

const GUARD_MS = 60000; // only a guard against hanging forever, not a timing assertion

/** Spawns spawnArgv(plan) with the plan's environment and working directory, as
 * vscode-languageclient does, and has it answer initialize; then shuts it down. */
async function initializeExactly(plan: LaunchPlan): Promise<{ init: InitializeResult; stderr: string }> {
  const argv = spawnArgv(plan);
  assert.equal(argv.args[argv.args.length - 1], "--stdio");
  const proc = spawn(argv.command, argv.args, { env: plan.env, cwd: plan.cwd, stdio: ["pipe", "pipe", "pipe"] });
  const stderr: string[] = [];
  proc.stderr.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  conn.onRequest(ConfigurationRequest.type, (params) =>
    params.items.map((item) => (item.section === "servelint" ? serverSettings(fromObject({}), undefined, true) : null)));
  conn.onRequest(RegistrationRequest.type, () => null);
  conn.onRequest(WorkDoneProgressCreateRequest.type, () => null);
  conn.listen();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "servelint-ws-"));
  let timer: NodeJS.Timeout | undefined;
  try {
    const folderUri = pathToFileURL(workspace).href;
    // A server that refuses its command line exits (argparse: code 2) before answering.
    const refused = exited.then((code) => {
      throw new Error(`the server exited with ${code} before answering initialize: ${stderr.join("")}`);
    });
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer; stderr: ${stderr.join("")}`)), GUARD_MS);
    });
    // Handled here, raced below: the normal exit after `exit` must not be unhandled.
    refused.catch(() => undefined);
    guard.catch(() => undefined);
    const init = await Promise.race([conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: folderUri,
      workspaceFolders: [{ uri: folderUri, name: "ws" }],
      capabilities: { workspace: { configuration: true, workspaceFolders: true } },
      initializationOptions: initializationOptions(serverSettings(fromObject({}), workspace, true), true),
    }), refused, guard]);
    await conn.sendRequest(ShutdownRequest.type);
    await conn.sendNotification(ExitNotification.type);
    const code = await Promise.race([exited, guard]);
    assert.equal(code, 0, `exit code; stderr: ${stderr.join("")}`);
    return { init, stderr: stderr.join("") };
  } finally {
    clearTimeout(timer);
    conn.dispose();
    if (proc.exitCode === null) {
      proc.kill();
    }
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

async function planFor(python: string, strategy: "useBundled" | "fromEnvironment", level: LogLevel): Promise<LaunchPlan> {
  const probe = await checkInterpreter({ argv: [python], source: "setting" }, ROOT);
  assert.ok(probe.ok, probe.ok ? "" : probe.reason);
  const baseEnv = { ...process.env };
  delete baseEnv.PYTHONPATH;
  return serverCommand({
    interpreter: [python], strategy, environmentHasServelint: probe.probe.hasServelint,
    bundledLibs: path.join(ROOT, "bundled", "libs"), extensionRoot: ROOT, baseEnv,
    platform: process.platform, logLevel: level,
  });
}

const bundledPresent = fs.existsSync(path.join(ROOT, "bundled", "libs", "servelint", "cli.py"));

test("exact command line, bundled libraries (useBundled)", {
  timeout: 120000, skip: bundledPresent ? false : "no bundled/libs (npm run bundle-server)",
}, async () => {
  const plan = await planFor(testPython(), "useBundled", "warning");
  assert.equal(plan.uses, "bundled");
  const { init } = await initializeExactly(plan);
  assert.equal(init.serverInfo?.name, "servelint");
});

test("exact command line, the development interpreter's servelint (fromEnvironment, debug log)", { timeout: 120000 }, async () => {
  const plan = await planFor(testPython(), "fromEnvironment", "debug");
  assert.equal(plan.uses, "environment");
  assert.deepEqual(spawnArgv(plan).args, ["-m", "servelint", "lsp", "--log-level", "debug", "--stdio"]);
  const { init } = await initializeExactly(plan);
  assert.equal(init.serverInfo?.name, "servelint");
  assert.ok(init.capabilities.textDocumentSync, "document sync offered");
});

/** The development environment's `servelint` console script, for servelint.path. */
function devExecutable(): string | undefined {
  const dir = path.dirname(testPython());
  const exe = path.join(dir, process.platform === "win32" ? "servelint.exe" : "servelint");
  return fs.existsSync(exe) ? exe : undefined;
}

test("exact command line, servelint.path (the environment's servelint executable)", {
  timeout: 120000, skip: devExecutable() ? false : "no servelint executable next to the test Python",
}, async () => {
  const exe = devExecutable() as string;
  assert.equal(executableProblem(exe, process.env), undefined);
  const plan = executableCommand({ executable: [exe], extensionRoot: ROOT, baseEnv: { ...process.env }, logLevel: "info" });
  assert.deepEqual(spawnArgv(plan), { command: exe, args: ["lsp", "--log-level", "info", "--stdio"] });
  const { init } = await initializeExactly(plan);
  assert.equal(init.serverInfo?.name, "servelint");
});
