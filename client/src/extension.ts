// The servelint VS Code extension: starts `<python> -m servelint lsp` (or the
// servelint.path executable's `lsp`) over stdio and connects a language client to it.
// The decisions (which interpreter, which libraries, which settings, the exact command
// line, the status text) live in modules without a 'vscode' import, tested with node's
// runner.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  DocumentSelector,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

import {
  folderForScope,
  importStrategy,
  initializationOptions,
  interpreterSetting,
  logLevel,
  LogLevel,
  pathSetting,
  serverSettings,
  ServerSettings,
  startFolder,
} from "./config";
import { BundleTarget, bundleFallback, checkBundle, vscodeTarget } from "./bundle";
import { displayArgv, findInterpreter, interpreterCandidates, noInterpreterMessage } from "./interpreter";
import * as fs from "node:fs";
import {
  executableCommand, executableMessage, executableProblem, LaunchInput, LaunchPlan, serverCommand, spawnArgv,
} from "./launch";
import { activeInterpreter, onActiveEnvironmentChanged } from "./python";
import {
  ClientStatus, formatLintSummary, LINT_WORKSPACE_COMMAND, parseServerStatus, STATUS_COMMAND, StatusState,
  statusView,
} from "./summary";

/** "helm": the Kubernetes extension's language for Helm chart templates. */
export const LANGUAGES = [
  "shellscript", "yaml", "helm", "dockercompose", "jsonc", "json", "dockerfile", "python", "markdown",
];

export const DOCUMENT_SELECTOR: DocumentSelector = [
  ...LANGUAGES.flatMap((language) => [
    { scheme: "file", language },
    { scheme: "untitled", language },
  ]),
  // The cells `servelint check` reads in a notebook file: code cells (VS Code shows a
  // `%%bash` cell as shellscript and some as plaintext; the kernel runs them all) and
  // Markdown cells (their fenced commands). A notebook's first cell is most often
  // Markdown, and VS Code asks that cell for `notebook.source.fixAll` on save.
  { scheme: "vscode-notebook-cell", language: "python" },
  { scheme: "vscode-notebook-cell", language: "shellscript" },
  { scheme: "vscode-notebook-cell", language: "plaintext" },
  { scheme: "vscode-notebook-cell", language: "markdown" },
];

/** Settings whose change needs a new server process; the others are synchronized. */
const RESTART_SETTINGS = ["servelint.interpreter", "servelint.path", "servelint.importStrategy", "servelint.logLevel"];

let output: vscode.OutputChannel;
let extensionRoot: string;
let extensionVersion = "";
/** Messages already shown as a notification in this window: a restart that meets the same
 * problem logs it again but does not notify again. */
const notified = new Set<string>();
let client: LanguageClient | undefined;
let environmentListener: vscode.Disposable | undefined;
let statusItem: vscode.LanguageStatusItem | undefined;
/** The server's state for the status item, and what the client knows of it. */
let status: StatusState = { kind: "starting" };
let statusClient: Omit<ClientStatus, "servelint" | "sglang"> | undefined;
/** Bumped by every status update: a slower, older answer does not overwrite a newer one. */
let statusGeneration = 0;
/** Starts and stops run one after the other, never interleaved. */
let queue: Promise<void> = Promise.resolve();

function log(line: string): void {
  output.appendLine(`[${new Date().toISOString()}] ${line}`);
}

function folders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

function folderOf(uri: vscode.Uri | undefined): vscode.WorkspaceFolder | undefined {
  return uri ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
}

/** The folder whose settings start the server: the active document's, else the first
 * open document's (servelint's languages first), else the first folder. */
function serverFolder(): vscode.WorkspaceFolder | undefined {
  const docs = vscode.workspace.textDocuments.filter((d) => !d.isClosed);
  return startFolder(
    folderOf(vscode.window.activeTextEditor?.document.uri),
    docs.filter((d) => vscode.languages.match(DOCUMENT_SELECTOR, d) > 0).map((d) => folderOf(d.uri)),
    docs.map((d) => folderOf(d.uri)),
    folders());
}

/** The servelint settings for a scope (a document or folder URI; none: the window), with
 * rule pack paths resolved against that scope's folder. A scope outside every folder, or
 * none, gets the window's values (in a single-folder workspace, that folder's). */
function settingsFor(scope: vscode.Uri | undefined): ServerSettings {
  const folder = folderForScope(folderOf(scope), folders());
  const config = vscode.workspace.getConfiguration("servelint", folder?.uri ?? scope);
  return serverSettings(config, folder?.uri.fsPath, vscode.workspace.isTrusted);
}

function readBundleManifest(): BundleTarget | undefined {
  try {
    return JSON.parse(fs.readFileSync(vscode.Uri.joinPath(vscode.Uri.file(extensionRoot), "bundled", "manifest.json").fsPath, "utf8")) as BundleTarget;
  } catch {
    return undefined;
  }
}

/** A notification with a Show Output button, once per window for the same text. */
function notifyOnce(severity: "warning" | "error", message: string): void {
  if (notified.has(message)) {
    return;
  }
  notified.add(message);
  const show = severity === "error" ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
  void show(message, "Show Output").then((choice) => {
    if (choice === "Show Output") {
      output.show(true);
    }
  });
}

function enqueue(step: () => Promise<void>): Promise<void> {
  queue = queue.then(step).catch((err) => log(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`));
  return queue;
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop(5000);
    } catch (err) {
      log(`stopping the server: ${String(err)}`);
    }
    await running.dispose().catch(() => undefined);
  }
}

/** An error message with buttons to open the setting that caused it or the output. */
function settingError(message: string, setting: string): void {
  log(message);
  void vscode.window.showErrorMessage(message, "Open Setting", "Show Output").then((choice) => {
    if (choice === "Open Setting") {
      void vscode.commands.executeCommand("workbench.action.openSettings", setting);
    } else if (choice === "Show Output") {
      output.show(true);
    }
  });
}

function failed(reason: string): void {
  status = { kind: "failed", reason };
  statusClient = undefined;
  void updateStatus();
}

/** servelint.path: its executable's `lsp`, no interpreter probe. */
function executablePlan(executable: string[], level: LogLevel): LaunchPlan | undefined {
  const problem = executableProblem(executable[0], process.env);
  if (problem) {
    settingError(executableMessage(problem), "servelint.path");
    failed(`servelint.path: ${problem}`);
    return undefined;
  }
  statusClient = { uses: "executable", executable: executable[0], bundledLibs: bundledLibs() };
  return executableCommand({ executable, extensionRoot, baseEnv: process.env, logLevel: level });
}

/** `<python> -m servelint lsp`: the interpreter chosen and probed, the libraries picked. */
async function interpreterPlan(folder: vscode.WorkspaceFolder | undefined, config: vscode.WorkspaceConfiguration,
  trusted: boolean, level: LogLevel): Promise<LaunchPlan | undefined> {
  const setting = interpreterSetting(config, folder?.uri.fsPath, trusted);
  const fromPythonExtension = trusted && setting.length === 0
    ? await activeInterpreter(folder?.uri, log) : undefined;
  const candidates = interpreterCandidates({
    trusted, setting, pythonExtension: fromPythonExtension, platform: process.platform,
  });
  const { found, failures } = await findInterpreter(candidates, extensionRoot);
  for (const f of failures) {
    log(f);
  }
  if (!found) {
    settingError(noInterpreterMessage(failures, setting.length > 0), "servelint.interpreter");
    failed(failures.length ? failures.join("; ") : "no Python 3.10+ found");
    return undefined;
  }
  const launch: LaunchInput = {
    interpreter: found.candidate.argv,
    strategy: importStrategy(config, trusted),
    environmentHasServelint: found.probe.hasServelint,
    bundledLibs: bundledLibs(),
    extensionRoot,
    baseEnv: process.env,
    platform: process.platform,
    logLevel: level,
  };
  let plan: LaunchPlan = serverCommand(launch);
  log(`Python ${found.probe.version.join(".")} (${found.candidate.source}): ${found.probe.executable || found.candidate.argv[0]}`);
  if (plan.warning) {
    log(plan.warning);
    void vscode.window.showWarningMessage(plan.warning);
  }
  let fallback: string | undefined;
  if (plan.uses === "bundled") {
    // The bundled libraries must load in this Python (this platform's compiled modules,
    // or, for the universal package, the environment's): else the environment's servelint
    // or nothing, with one message.
    const problems = await checkBundle(plan, found.candidate.argv, bundledLibs());
    const outcome = bundleFallback({
      launch: { ...launch, strategy: "useBundled" },
      problems,
      manifest: readBundleManifest(),
      pythonVersion: found.probe.version.join("."),
      hostTarget: vscodeTarget(process.platform, process.arch),
      extensionVersion,
    });
    if (outcome.message) {
      log(outcome.message);
    }
    if (!outcome.plan) {
      notifyOnce("error", outcome.message ?? "servelint cannot start");
      failed(outcome.reason ?? "the bundled libraries do not load");
      return undefined;
    }
    if (outcome.message) {
      notifyOnce("warning", outcome.message);
    }
    plan = outcome.plan;
    fallback = outcome.reason;
  }
  statusClient = {
    python: found.probe.executable || found.candidate.argv[0],
    pythonVersion: found.probe.version.join("."),
    uses: plan.uses,
    bundledLibs: bundledLibs(),
    fallback,
  };
  return plan;
}

function bundledLibs(): string {
  return vscode.Uri.joinPath(vscode.Uri.file(extensionRoot), "bundled", "libs").fsPath;
}

async function startClient(): Promise<void> {
  const trusted = vscode.workspace.isTrusted;
  // Multi-root: the settings of the folder that holds the active (or first opened)
  // document choose the interpreter and start the server; each document's own folder
  // settings are pulled per scope later.
  const folder = serverFolder();
  const config = vscode.workspace.getConfiguration("servelint", folder?.uri);
  const level = logLevel(config);
  status = { kind: "starting" };
  statusClient = undefined;
  void updateStatus();
  if (!trusted) {
    log("Untrusted workspace (limited mode): bundled servelint with python3 from PATH; " +
      "servelint.interpreter, servelint.path, the Python extension's environment, rule packs and project configuration are ignored.");
  }
  if (folder && folders().length > 1) {
    log(`Multi-root workspace: starting with the settings of folder ${folder.name}.`);
  }
  const executable = pathSetting(config, folder?.uri.fsPath, trusted);
  const plan = executable.length > 0
    ? executablePlan(executable, level)
    : await interpreterPlan(folder, config, trusted, level);
  if (!plan) {
    return;
  }
  const argv = spawnArgv(plan);
  log(`Starting: ${displayArgv([argv.command, ...argv.args])} (servelint: ${plan.uses})`);

  // No transport kind: the client then appends nothing, and argv (with its --stdio) is
  // exactly the process started, the one client/test/launch.test.ts starts.
  const serverOptions: ServerOptions = {
    command: argv.command,
    args: argv.args,
    options: { cwd: plan.cwd, env: plan.env },
  };
  let started: LanguageClient | undefined;
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    synchronize: { configurationSection: "servelint" },
    initializationOptions: initializationOptions(settingsFor(folder?.uri), trusted),
    middleware: {
      workspace: {
        // The server pulls section "servelint" per scope: answer with that scope's
        // folder settings, rule pack paths resolved against that folder (and none in an
        // untrusted workspace).
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) {
            return answer;
          }
          return params.items.map((item, i) => (item.section === "servelint"
            ? settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
            : answer[i]));
        },
        // A servelint.* change: not one folder's settings as if they were global, but the
        // window's (folder-less) section; the server pulls each document's folder
        // settings with workspace/configuration.
        didChangeConfiguration: async (_sections, _next) => {
          await started?.sendNotification(DidChangeConfigurationNotification.type,
            { settings: { servelint: settingsFor(undefined) } });
          void updateStatus();
        },
      },
    },
  };
  started = new LanguageClient("servelint", "servelint", serverOptions, clientOptions);
  client = started;
  const self = started;
  self.onDidChangeState((e) => {
    // Stopped for good (not by a restart, which replaces `client` first).
    if (e.newState === State.Stopped && client === self && status.kind === "running") {
      failed("the server stopped; see the servelint output");
    }
  });
  try {
    await started.start();
    log("servelint server started.");
    status = {
      kind: "running",
      // sglang: filled in per document by updateStatus.
      client: {
        ...(statusClient ?? { uses: plan.uses, bundledLibs: bundledLibs() }),
        sglang: "",
        servelint: started.initializeResult?.serverInfo?.version,
      },
    };
    void updateStatus();
  } catch (err) {
    log(`The server did not start: ${String(err)}`);
    failed(`the server did not start: ${err instanceof Error ? err.message : String(err)}`);
    void vscode.window.showErrorMessage(`servelint: the server did not start (${String(err)}). See the servelint output.`);
  }
}

let statusTimer: ReturnType<typeof setTimeout> | undefined;

/** The document the status item describes: the active editor's, when servelint reads it. */
function statusDocument(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && vscode.languages.match(DOCUMENT_SELECTOR, doc) > 0 ? doc : undefined;
}

/** Refreshes the language status item: from the server's status command when it offers
 * one, else from what the client knows (the setting's SGLang version, the interpreter). */
async function updateStatus(): Promise<void> {
  const item = statusItem;
  if (!item) {
    return;
  }
  const generation = ++statusGeneration;
  let state = status;
  if (state.kind === "running") {
    const doc = statusDocument();
    const running = client;
    const clientStatus: ClientStatus = { ...state.client, sglang: settingsFor(doc?.uri).sglangVersion };
    state = { kind: "running", client: clientStatus };
    const offered = running?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    if (running && running.isRunning() && offered.includes(STATUS_COMMAND)) {
      try {
        const reply: unknown = await running.sendRequest(ExecuteCommandRequest.type,
          { command: STATUS_COMMAND, arguments: doc ? [doc.uri.toString()] : [] });
        state = { kind: "running", client: clientStatus, server: parseServerStatus(reply) };
      } catch (err) {
        log(`${STATUS_COMMAND} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  if (generation !== statusGeneration) {
    return;
  }
  const view = statusView(state);
  item.text = view.text;
  item.detail = view.detail;
  item.command = { title: "Show Output", command: "servelint.showLogs", tooltip: view.tooltip };
  item.busy = view.busy;
  item.severity = view.error ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
}

function restart(reason: string): Promise<void> {
  return enqueue(async () => {
    log(`Restarting the server: ${reason}.`);
    await stopClient();
    await startClient();
  });
}

async function lintWorkspace(): Promise<void> {
  await queue;
  const running = client;
  if (!running || !running.isRunning()) {
    void vscode.window.showWarningMessage("servelint: the server is not running. See the servelint output.");
    return;
  }
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "servelint: linting the workspace" },
      () => running.sendRequest(ExecuteCommandRequest.type, { command: LINT_WORKSPACE_COMMAND }));
    const summary = formatLintSummary(result);
    log(summary);
    void vscode.window.showInformationMessage(summary);
  } catch (err) {
    const message = `servelint: linting the workspace failed: ${err instanceof Error ? err.message : String(err)}`;
    log(message);
    void vscode.window.showErrorMessage(message);
  }
}

/** Restart when the user picks another environment in the Python extension (only used
 * in a trusted workspace without servelint.interpreter). */
async function watchEnvironment(): Promise<void> {
  if (environmentListener) {
    return;
  }
  environmentListener = await onActiveEnvironmentChanged(() => {
    const folder = serverFolder();
    const config = vscode.workspace.getConfiguration("servelint", folder?.uri);
    if (vscode.workspace.isTrusted && interpreterSetting(config, folder?.uri.fsPath, true).length === 0
      && pathSetting(config, folder?.uri.fsPath, true).length === 0) {
      void restart("the Python extension's environment changed");
    }
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("servelint");
  extensionRoot = context.extensionPath;
  extensionVersion = String((context.extension.packageJSON as { version?: unknown }).version ?? "");
  statusItem = vscode.languages.createLanguageStatusItem("servelint.status", DOCUMENT_SELECTOR);
  statusItem.name = "servelint";
  statusItem.command = { title: "Show Output", command: "servelint.showLogs" };
  void updateStatus();
  context.subscriptions.push(
    output,
    statusItem,
    vscode.window.onDidChangeActiveTextEditor(() => void updateStatus()),
    // The release a document is judged by is known once its launches are linted: follow
    // the active document's diagnostics (debounced: they change at every edit).
    vscode.languages.onDidChangeDiagnostics((e) => {
      const active = vscode.window.activeTextEditor?.document.uri.toString();
      if (active && e.uris.some((u) => u.toString() === active)) {
        clearTimeout(statusTimer);
        statusTimer = setTimeout(() => void updateStatus(), 300);
      }
    }),
    vscode.commands.registerCommand("servelint.restart", () => restart("requested")),
    vscode.commands.registerCommand("servelint.showLogs", () => output.show()),
    vscode.commands.registerCommand("servelint.lintWorkspace", () => lintWorkspace()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const changed = RESTART_SETTINGS.find((s) => e.affectsConfiguration(s));
      if (changed) {
        void restart(`${changed} changed`);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void watchEnvironment();
      void restart("the workspace is now trusted");
    }),
    { dispose: () => environmentListener?.dispose() },
  );
  if (vscode.workspace.isTrusted) {
    await watchEnvironment();
  }
  await enqueue(startClient);
}

export async function deactivate(): Promise<void> {
  await enqueue(stopClient);
}
