// The Python extension's active environment (ms-python.python), read through its public
// API without a dependency on @vscode/python-extension (a thin wrapper over the same calls).

import * as vscode from "vscode";

interface EnvironmentPath {
  id: string;
  path: string;
}

interface ResolvedEnvironment {
  executable: { uri?: vscode.Uri };
}

interface EnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: EnvironmentsApi;
}

const PYTHON_EXTENSION_ID = "ms-python.python";

async function environmentsApi(): Promise<EnvironmentsApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  const api = ext.isActive ? ext.exports : await ext.activate();
  return api?.environments;
}

/** The active environment's interpreter for the resource, or undefined when the Python
 * extension is missing, fails, or has none. */
export async function activeInterpreter(resource: vscode.Uri | undefined,
  log: (line: string) => void): Promise<string | undefined> {
  try {
    const envs = await environmentsApi();
    if (!envs) {
      return undefined;
    }
    const active = envs.getActiveEnvironmentPath(resource);
    const resolved = await envs.resolveEnvironment(active);
    const exe = resolved?.executable.uri?.fsPath;
    if (!exe) {
      log(`The Python extension's environment ${active.path} has no interpreter.`);
    }
    return exe;
  } catch (err) {
    log(`Could not ask the Python extension for its environment: ${String(err)}`);
    return undefined;
  }
}

/** Calls `listener` whenever the user picks another environment in the Python extension. */
export async function onActiveEnvironmentChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const envs = await environmentsApi();
    return envs?.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}
