// The servelint VS Code extension: starts `<python> -m servelint lsp` over stdio and
// connects a language client to it. The decisions (which interpreter, which libraries,
// which settings) live in modules without a 'vscode' import, tested with node's runner.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  DocumentSelector,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

import {
  importStrategy,
  initializationOptions,
  interpreterSetting,
  serverSettings,
  ServerSettings,
} from "./config";
import { displayArgv, findInterpreter, interpreterCandidates, noInterpreterMessage } from "./interpreter";
import * as fs from "node:fs";
import { BundleManifest, bundleMismatch, serverCommand } from "./launch";
import { activeInterpreter, onActiveEnvironmentChanged } from "./python";
import { formatLintSummary, LINT_WORKSPACE_COMMAND } from "./summary";

export const LANGUAGES = [
  "shellscript", "yaml", "dockercompose", "jsonc", "json", "dockerfile", "python", "markdown",
];

export const DOCUMENT_SELECTOR: DocumentSelector = [
  ...LANGUAGES.flatMap((language) => [
    { scheme: "file", language },
    { scheme: "untitled", language },
  ]),
  { scheme: "vscode-notebook-cell", language: "python" },
];

/** Settings whose change needs a new server process; the others are synchronized. */
const RESTART_SETTINGS = ["servelint.interpreter", "servelint.importStrategy"];

let output: vscode.OutputChannel;
let extensionRoot: string;
let client: LanguageClient | undefined;
let environmentListener: vscode.Disposable | undefined;
/** Starts and stops run one after the other, never interleaved. */
let queue: Promise<void> = Promise.resolve();

function log(line: string): void {
  output.appendLine(`[${new Date().toISOString()}] ${line}`);
}

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

function settingsFor(scope: vscode.Uri | undefined): ServerSettings {
  const folder = scope ? vscode.workspace.getWorkspaceFolder(scope) ?? firstFolder() : firstFolder();
  const config = vscode.workspace.getConfiguration("servelint", folder?.uri ?? scope);
  return serverSettings(config, folder?.uri.fsPath, vscode.workspace.isTrusted);
}

function readBundleManifest(): BundleManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(vscode.Uri.joinPath(vscode.Uri.file(extensionRoot), "bundled", "manifest.json").fsPath, "utf8")) as BundleManifest;
  } catch {
    return undefined;
  }
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

async function startClient(): Promise<void> {
  const trusted = vscode.workspace.isTrusted;
  const folder = firstFolder();
  const config = vscode.workspace.getConfiguration("servelint", folder?.uri);
  const setting = interpreterSetting(config, folder?.uri.fsPath, trusted);
  const fromPythonExtension = trusted && setting.length === 0
    ? await activeInterpreter(folder?.uri, log) : undefined;
  const candidates = interpreterCandidates({
    trusted, setting, pythonExtension: fromPythonExtension, platform: process.platform,
  });
  if (!trusted) {
    log("Untrusted workspace (limited mode): bundled servelint with python3 from PATH; " +
      "servelint.interpreter, the Python extension's environment, rule packs and project configuration are ignored.");
  }
  const { found, failures } = await findInterpreter(candidates, extensionRoot);
  for (const f of failures) {
    log(f);
  }
  if (!found) {
    const message = noInterpreterMessage(failures, setting.length > 0);
    log(message);
    void vscode.window.showErrorMessage(message, "Open Setting", "Show Output").then((choice) => {
      if (choice === "Open Setting") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "servelint.interpreter");
      } else if (choice === "Show Output") {
        output.show(true);
      }
    });
    return;
  }
  const plan = serverCommand({
    interpreter: found.candidate.argv,
    strategy: importStrategy(config, trusted),
    environmentHasServelint: found.probe.hasServelint,
    bundledLibs: vscode.Uri.joinPath(vscode.Uri.file(extensionRoot), "bundled", "libs").fsPath,
    extensionRoot,
    baseEnv: process.env,
    platform: process.platform,
  });
  if (plan.warning) {
    log(plan.warning);
    void vscode.window.showWarningMessage(plan.warning);
  }
  if (plan.uses === "bundled") {
    const mismatch = bundleMismatch(readBundleManifest(), found.probe.version);
    if (mismatch) {
      log(`Warning: ${mismatch}`);
      void vscode.window.showWarningMessage(`servelint: ${mismatch}`);
    }
  }
  log(`Python ${found.probe.version.join(".")} (${found.candidate.source}): ${found.probe.executable || found.candidate.argv[0]}`);
  log(`Starting: ${displayArgv([plan.command, ...plan.args])} (servelint: ${plan.uses})`);

  const serverOptions: ServerOptions = {
    command: plan.command,
    args: plan.args,
    transport: TransportKind.stdio,
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
        // The server pulls section "servelint": answer with resolved rule pack paths, and
        // without them in an untrusted workspace.
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) {
            return answer;
          }
          return params.items.map((item, i) => (item.section === "servelint"
            ? settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
            : answer[i]));
        },
        // A servelint.* change: send the same resolved settings the pull would get.
        didChangeConfiguration: async (_sections, _next) => {
          await started?.sendNotification(DidChangeConfigurationNotification.type,
            { settings: { servelint: settingsFor(undefined) } });
        },
      },
    },
  };
  started = new LanguageClient("servelint", "servelint", serverOptions, clientOptions);
  client = started;
  try {
    await started.start();
    log("servelint server started.");
  } catch (err) {
    log(`The server did not start: ${String(err)}`);
    void vscode.window.showErrorMessage(`servelint: the server did not start (${String(err)}). See the servelint output.`);
  }
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
    const folder = firstFolder();
    const config = vscode.workspace.getConfiguration("servelint", folder?.uri);
    if (vscode.workspace.isTrusted && interpreterSetting(config, folder?.uri.fsPath, true).length === 0) {
      void restart("the Python extension's environment changed");
    }
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("servelint");
  extensionRoot = context.extensionPath;
  context.subscriptions.push(
    output,
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
