// How the server process is started. No 'vscode' import.

import * as fs from "node:fs";
import * as path from "node:path";
import { DEFAULT_LOG_LEVEL, ImportStrategy, LogLevel } from "./config";

export interface ServerCommand {
  command: string;
  args: string[];
  /** The full environment of the server process. */
  env: NodeJS.ProcessEnv;
  /** Never the workspace: `python -m` puts the working directory first on sys.path, and
   * a workspace folder named `servelint` or `yaml` must not be imported. */
  cwd: string;
  /** Which servelint the process runs: the extension's bundled libraries, the one
   * installed in the interpreter's environment, or the servelint.path executable. */
  uses: ServelintSource;
}

export type ServelintSource = "bundled" | "environment" | "executable";

export interface LaunchInput {
  /** The interpreter and its extra arguments. */
  interpreter: string[];
  strategy: ImportStrategy;
  /** Whether `servelint` is importable from the interpreter's own environment. */
  environmentHasServelint: boolean;
  /** The extension's bundled libraries folder. */
  bundledLibs: string;
  /** The extension's folder: the working directory of the server. */
  extensionRoot: string;
  baseEnv: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** servelint.logLevel, passed as `--log-level` (default warning). */
  logLevel?: LogLevel;
}

export interface LaunchPlan extends ServerCommand {
  /** Set when fromEnvironment had to fall back to the bundled libraries. */
  warning?: string;
}

/** PYTHONPATH with `first` in front of whatever was there (duplicates removed). */
export function prependPythonPath(first: string, existing: string | undefined,
  platform: NodeJS.Platform): string {
  const delimiter = platform === "win32" ? ";" : ":";
  const rest = (existing ?? "").split(delimiter).filter((p) => p !== "" && p !== first);
  return [first, ...rest].join(delimiter);
}

/** The environment key for PYTHONPATH as the base environment spells it (Windows
 * environment names are case-insensitive, node keeps the original spelling). */
function envKey(env: NodeJS.ProcessEnv, name: string, platform: NodeJS.Platform): string {
  if (platform !== "win32") {
    return name;
  }
  return Object.keys(env).find((k) => k.toUpperCase() === name) ?? name;
}

export function serverCommand(input: LaunchInput): LaunchPlan {
  const [command, ...extra] = input.interpreter;
  const args = [...extra, "-m", "servelint", ...lspArgs(input.logLevel)];
  const env: NodeJS.ProcessEnv = { ...input.baseEnv };
  let uses: ServelintSource = "bundled";
  let warning: string | undefined;
  if (input.strategy === "fromEnvironment" && input.environmentHasServelint) {
    uses = "environment";
  } else if (input.strategy === "fromEnvironment") {
    warning = `servelint is not installed in ${input.interpreter.join(" ")}'s environment ` +
      "(servelint.importStrategy is fromEnvironment); using the servelint bundled with the extension.";
  }
  if (uses === "bundled") {
    const key = envKey(env, "PYTHONPATH", input.platform);
    env[key] = prependPythonPath(path.resolve(input.bundledLibs), env[key], input.platform);
  }
  return { command, args, env, cwd: input.extensionRoot, uses, warning };
}

/** The `lsp` subcommand and its options, without the transport. */
function lspArgs(logLevel: LogLevel | undefined): string[] {
  return ["lsp", "--log-level", logLevel ?? DEFAULT_LOG_LEVEL];
}

export interface ExecutableInput {
  /** servelint.path: the executable and its extra arguments (already expanded). */
  executable: string[];
  extensionRoot: string;
  baseEnv: NodeJS.ProcessEnv;
  logLevel?: LogLevel;
}

/** servelint.path: `<path...> lsp --log-level L`, the environment as it is (the
 * executable brings its own servelint), the extension folder as working directory. */
export function executableCommand(input: ExecutableInput): LaunchPlan {
  const [command, ...extra] = input.executable;
  return {
    command,
    args: [...extra, ...lspArgs(input.logLevel)],
    env: { ...input.baseEnv },
    cwd: input.extensionRoot,
    uses: "executable",
  };
}

/** What vscode-languageclient 9 appends to an Executable's args for
 * TransportKind.stdio. */
export const STDIO_ARGS: readonly string[] = ["--stdio"];

/** The exact command line of the server process: the plan's command and arguments plus
 * the transport's `--stdio`. The extension hands this whole argv to the language client
 * with no transport kind, so the client adds nothing and the process VS Code starts is
 * the one the tests start. */
export function spawnArgv(plan: ServerCommand): { command: string; args: string[] } {
  return { command: plan.command, args: [...plan.args, ...STDIO_ARGS] };
}

/** Why the servelint.path executable cannot be started, or undefined when it can: a path
 * (with a separator) must be an executable file; a bare name must be found on PATH
 * (with PATHEXT on Windows). */
export function executableProblem(file: string, env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform): string | undefined {
  const isPath = file.includes("/") || (platform === "win32" && file.includes("\\"));
  if (isPath) {
    return fileProblem(file, platform);
  }
  const pathKey = Object.keys(env).find((k) => (platform === "win32" ? k.toUpperCase() === "PATH" : k === "PATH"));
  const dirs = (pathKey ? env[pathKey] ?? "" : "").split(platform === "win32" ? ";" : ":").filter((d) => d !== "");
  const extensions = platform === "win32"
    ? ["", ...(env.PATHEXT ?? env.PathExt ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((e) => e !== "")]
    : [""];
  for (const dir of dirs) {
    for (const ext of extensions) {
      if (fileProblem(path.join(dir, file + ext), platform) === undefined) {
        return undefined;
      }
    }
  }
  return `${file} was not found on PATH`;
}

function fileProblem(file: string, platform: NodeJS.Platform): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return `${file} was not found`;
  }
  if (!stat.isFile()) {
    return `${file} is not a file`;
  }
  if (platform !== "win32") {
    try {
      fs.accessSync(file, fs.constants.X_OK);
    } catch {
      return `${file} is not executable`;
    }
  }
  return undefined;
}

/** The message shown when servelint.path cannot start the server. */
export function executableMessage(problem: string): string {
  return `The servelint executable in servelint.path cannot be started (${problem}). ` +
    "Set servelint.path to a servelint executable (for example [\"~/.local/bin/servelint\"], " +
    "where pipx and uv tool install put it), or clear it to run the bundled server.";
}
