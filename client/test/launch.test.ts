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

import {
  BUNDLE_PROBE_CODE, bundleFallback, bundleProblems, checkBundle, FallbackInput, insideFolder, parseBundleProbe,
  vscodeTarget,
} from "../src/bundle";
import { fromObject, initializationOptions, LogLevel, serverSettings } from "../src/config";
import { checkInterpreter, execRunner, Runner } from "../src/interpreter";
import {
  executableCommand, executableMessage, executableProblem, LaunchInput, LaunchPlan,
  prependPythonPath, serverCommand, spawnArgv,
} from "../src/launch";
import { buildBundle, ROOT, testPython } from "./support";

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

// --- the bundle check and what runs when the bundled libraries do not load -------------

test("the bundle probe's report: parsed, and what it says is wrong", () => {
  const report = parseBundleProbe('noise\nSERVELINT-BUNDLE-PROBE {"servelint": {"file": "/ext/bundled/libs/servelint/__init__.py"}, '
    + '"yaml": {"file": "/ext/bundled/libs/yaml/__init__.py"}, "tree_sitter": {"error": "ImportError: cannot import name \'_binding\'"}, '
    + '"tree_sitter_bash": {"error": "ModuleNotFoundError: x"}}\n');
  assert.ok(report);
  assert.deepEqual(bundleProblems(report, "/ext/bundled/libs", "linux"),
    ["tree_sitter: ImportError: cannot import name '_binding'", "tree_sitter_bash: ModuleNotFoundError: x"]);
  // servelint found elsewhere (the bundle's copy is missing) is a problem too.
  assert.deepEqual(bundleProblems({ servelint: { file: "/venv/lib/servelint/__init__.py" } }, "/ext/bundled/libs", "linux"),
    ["servelint is missing from /ext/bundled/libs"]);
  assert.deepEqual(bundleProblems({ servelint: { file: "/ext/bundled/libs/servelint/__init__.py" } }, "/ext/bundled/libs", "linux"), []);
  assert.equal(parseBundleProbe("SERVELINT-BUNDLE-PROBE [1]"), undefined);
  assert.equal(parseBundleProbe("Traceback ..."), undefined);
  assert.equal(insideFolder("C:\\Ext\\bundled\\libs\\servelint\\__init__.py", "c:\\ext\\bundled\\libs", "win32"), true);
  assert.equal(insideFolder("/ext/bundled/libs2/servelint/__init__.py", "/ext/bundled/libs", "linux"), false);
  assert.equal(vscodeTarget("darwin", "arm64"), "darwin-arm64");
  assert.equal(vscodeTarget("win32", "x64"), "win32-x64");
  assert.equal(vscodeTarget("linux", "ia32"), undefined);
});

test("a probe that does not print its report is a problem with the interpreter's words", async () => {
  const run: Runner = async (_command, args, _cwd, env) => {
    assert.equal(args[args.length - 1], BUNDLE_PROBE_CODE);
    assert.equal(env?.PYTHONPATH, "/ext/bundled/libs");
    return { code: 1, stdout: "", stderr: "Traceback (most recent call last):\nSyntaxError: bad\n" };
  };
  const plan = serverCommand({ ...base, baseEnv: {} });
  assert.deepEqual(await checkBundle(plan, ["/usr/bin/python3"], "/ext/bundled/libs", run, "linux"),
    ["/usr/bin/python3 could not check the bundled libraries (exit 1: Traceback (most recent call last): SyntaxError: bad)"]);
});

const fallbackBase: FallbackInput = {
  launch: base, problems: ["tree_sitter: ImportError: cannot import name '_binding'"],
  manifest: { target: "linux-x64" }, pythonVersion: "3.12.1", hostTarget: "darwin-arm64", extensionVersion: "0.1.0",
};

test("a bundle that loads: the bundled plan, no message", () => {
  const outcome = bundleFallback({ ...fallbackBase, problems: [] });
  assert.equal(outcome.plan?.uses, "bundled");
  assert.equal(outcome.message, undefined);
});

test("another platform's bundle with servelint in the environment: the environment's servelint and one message", () => {
  const outcome = bundleFallback({ ...fallbackBase, launch: { ...base, environmentHasServelint: true } });
  assert.equal(outcome.plan?.uses, "environment");
  assert.equal(outcome.plan?.env.PYTHONPATH, "/mine", "the bundled libraries are not on PYTHONPATH");
  assert.equal(outcome.message,
    "servelint: the server libraries bundled with this extension (linux-x64) do not load in Python 3.12.1 (/usr/bin/python3) "
    + "(tree_sitter: ImportError: cannot import name '_binding'); running the servelint installed in that environment instead. "
    + "Install the servelint package built for this machine (servelint-darwin-arm64-0.1.0.vsix) to run the bundled one.");
  assert.match(outcome.reason ?? "", /^bundled libraries do not load here \(tree_sitter: ImportError/);
});

test("another platform's bundle and no servelint in the environment: nothing starts, one error saying what to install", () => {
  const outcome = bundleFallback(fallbackBase);
  assert.equal(outcome.plan, undefined);
  assert.equal(outcome.message,
    "servelint cannot start: the server libraries bundled with this extension (linux-x64) do not load in Python 3.12.1 "
    + "(/usr/bin/python3) (tree_sitter: ImportError: cannot import name '_binding'), and servelint is not installed in that "
    + "environment. Install the servelint package built for this machine (servelint-darwin-arm64-0.1.0.vsix), or install "
    + "servelint into that Python (/usr/bin/python3 -m pip install servelint), or set servelint.interpreter to a Python "
    + "that has servelint installed.");
});

test("the universal package in an environment without its libraries names them", () => {
  const outcome = bundleFallback({
    ...fallbackBase, hostTarget: undefined, problems: ["tree_sitter: ModuleNotFoundError: No module named 'tree_sitter'"],
    manifest: { target: "universal", environmentDependencies: ["PyYAML", "tree-sitter", "tree-sitter-bash"] },
  });
  assert.equal(outcome.plan, undefined);
  assert.match(outcome.message ?? "", /^servelint cannot start: the universal servelint package takes PyYAML, tree-sitter, tree-sitter-bash from the interpreter's environment, and they do not load in Python 3\.12\.1 \(\/usr\/bin\/python3\) \(tree_sitter: ModuleNotFoundError/);
  assert.match(outcome.message ?? "", /Install them into that environment \(\/usr\/bin\/python3 -m pip install servelint\)/);
  // On a machine with a package of its own, that package is the first advice.
  const onMac = bundleFallback({ ...fallbackBase, manifest: { target: "universal" } });
  assert.match(onMac.message ?? "", /Install the servelint package built for this machine \(servelint-darwin-arm64-0\.1\.0\.vsix\)/);
  // This machine's own package that does not load (damaged, another libc): reinstall.
  const own = bundleFallback({ ...fallbackBase, hostTarget: "linux-x64" });
  assert.match(own.message ?? "", /Reinstall the extension, or install servelint into that Python/);
});

/** The bundle check and fallback exactly as the extension runs them for an extension
 * folder `root` and an interpreter: the interpreter's probe, the bundled plan, the bundle
 * probe with that plan's environment, the decision. */
async function startDecision(root: string, interpreter: string[]) {
  const probe = await checkInterpreter({ argv: interpreter, source: "setting" }, root);
  assert.ok(probe.ok, probe.ok ? "" : probe.reason);
  const baseEnv = { ...process.env };
  delete baseEnv.PYTHONPATH;
  const bundledLibs = path.join(root, "bundled", "libs");
  const launch: LaunchInput = {
    interpreter, strategy: "useBundled", environmentHasServelint: probe.probe.hasServelint, bundledLibs,
    extensionRoot: root, baseEnv, platform: process.platform,
  };
  const problems = await checkBundle(serverCommand(launch), interpreter, bundledLibs);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "bundled", "manifest.json"), "utf8"));
  const outcome = bundleFallback({
    launch, problems, manifest, pythonVersion: probe.probe.version.join("."),
    hostTarget: vscodeTarget(process.platform, process.arch), extensionVersion: "0.1.0",
  });
  return { problems, outcome, hasServelint: probe.probe.hasServelint };
}

/** Where the bundle probe imported each module from, run as the plan runs the server. */
async function probeReport(root: string, interpreter: string[]) {
  const baseEnv = { ...process.env };
  delete baseEnv.PYTHONPATH;
  const plan = serverCommand({ ...base, interpreter, bundledLibs: path.join(root, "bundled", "libs"), extensionRoot: root, baseEnv, platform: process.platform });
  const result = await execRunner(interpreter[0], [...interpreter.slice(1), "-c", BUNDLE_PROBE_CODE], plan.cwd, plan.env);
  const report = parseBundleProbe(result.stdout);
  assert.ok(report, `no report: ${result.stderr}`);
  return report;
}

test("this machine's bundle loads in the development Python: the bundled server starts", {
  timeout: 120000, skip: bundledPresent ? false : "no bundled/libs (npm run bundle-server)",
}, async () => {
  const { problems, outcome } = await startDecision(ROOT, [testPython()]);
  assert.deepEqual(problems, []);
  assert.equal(outcome.plan?.uses, "bundled");
  assert.equal(outcome.message, undefined);
});

// A foreign platform's real package (macOS arm64 wheels here, Windows wheels on a Mac):
// its compiled modules cannot load on this machine.
const FOREIGN = process.platform === "darwin" ? "win32-x64" : "darwin-arm64";

test(`a ${FOREIGN} bundle on this machine: the environment's servelint runs, with one message`, { timeout: 180000 }, async () => {
  const root = buildBundle(FOREIGN);
  try {
    const { problems, outcome, hasServelint } = await startDecision(root, [testPython()]);
    assert.ok(hasServelint, "the development Python has servelint installed");
    assert.ok(problems.some((p) => p.startsWith("tree_sitter: ")), `tree_sitter does not load: ${problems.join("; ")}`);
    assert.equal(outcome.plan?.uses, "environment");
    assert.ok(!(outcome.plan?.env.PYTHONPATH ?? "").includes(root), "the bundle is not on PYTHONPATH");
    assert.match(outcome.message ?? "", new RegExp(`^servelint: the server libraries bundled with this extension \\(${FOREIGN}\\) do not load in Python 3\\.\\d+\\.\\d+ .*\\(tree_sitter: .*running the servelint installed in that environment instead\\.`));
    // The environment's servelint really serves, started exactly as planned.
    const { init } = await initializeExactly(outcome.plan as LaunchPlan);
    assert.equal(init.serverInfo?.name, "servelint");
    // Without servelint in the environment (-S: no site-packages), nothing starts.
    const bare = await startDecision(root, [testPython(), "-S"]);
    assert.equal(bare.hasServelint, false);
    assert.equal(bare.outcome.plan, undefined);
    assert.match(bare.outcome.message ?? "", /^servelint cannot start: .* and servelint is not installed in that environment\./);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("this machine's bundle with a damaged compiled module: the environment's servelint runs", {
  timeout: 120000, skip: bundledPresent ? false : "no bundled/libs (npm run bundle-server)",
}, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "servelint-ext-damaged-"));
  try {
    fs.cpSync(path.join(ROOT, "bundled"), path.join(root, "bundled"), { recursive: true });
    const folder = path.join(root, "bundled", "libs", "tree_sitter");
    const modules = fs.readdirSync(folder).filter((f) => f.startsWith("_binding."));
    assert.ok(modules.length > 0, `no compiled module in ${folder}`);
    for (const m of modules) {
      fs.writeFileSync(path.join(folder, m), "not a shared library");
    }
    const { problems, outcome } = await startDecision(root, [testPython()]);
    assert.equal(problems.length, 1, problems.join("; "));
    assert.match(problems[0], /^tree_sitter: ImportError: /);
    assert.equal(outcome.plan?.uses, "environment");
    assert.match(outcome.message ?? "", /running the servelint installed in that environment instead/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("the universal bundle: bundled servelint with the environment's PyYAML and tree-sitter, or one error without them", { timeout: 180000 }, async () => {
  const root = buildBundle("universal");
  try {
    const libs = path.join(root, "bundled", "libs");
    const report = await probeReport(root, [testPython()]);
    assert.ok(insideFolder(report.servelint.file ?? "", libs), `servelint from the bundle: ${report.servelint.file}`);
    for (const name of ["yaml", "tree_sitter", "tree_sitter_bash"]) {
      assert.equal(report[name].error, undefined, `${name}: ${report[name].error}`);
      assert.ok(report[name].file && !insideFolder(report[name].file as string, libs), `${name} from the environment: ${report[name].file}`);
    }
    const { problems, outcome } = await startDecision(root, [testPython()]);
    assert.deepEqual(problems, []);
    assert.equal(outcome.plan?.uses, "bundled");
    const { init } = await initializeExactly(outcome.plan as LaunchPlan);
    assert.equal(init.serverInfo?.name, "servelint");
    const bare = await startDecision(root, [testPython(), "-S"]);
    assert.equal(bare.outcome.plan, undefined);
    assert.ok(bare.problems.some((p) => p.startsWith("tree_sitter: ModuleNotFoundError")), bare.problems.join("; "));
    assert.match(bare.outcome.message ?? "", /^servelint cannot start: the universal servelint package takes PyYAML, tree-sitter, tree-sitter-bash from the interpreter's environment/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
