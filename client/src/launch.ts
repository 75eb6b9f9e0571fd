// How the server process is started. No 'vscode' import.

import * as path from "node:path";
import type { ImportStrategy } from "./config";

export interface ServerCommand {
  command: string;
  args: string[];
  /** The full environment of the server process. */
  env: NodeJS.ProcessEnv;
  /** Never the workspace: `python -m` puts the working directory first on sys.path, and
   * a workspace folder named `servelint` or `yaml` must not be imported. */
  cwd: string;
  /** Which servelint the process runs. */
  uses: "bundled" | "environment";
}

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
  const args = [...extra, "-m", "servelint", "lsp"];
  const env: NodeJS.ProcessEnv = { ...input.baseEnv };
  let uses: "bundled" | "environment" = "bundled";
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

/** bundled/manifest.json, written by client/scripts/bundle_server.py. */
export interface BundleManifest {
  platform?: string;
  pythons?: string[];
}

/** Why the bundled libraries cannot run in this Python, or undefined when they can (or
 * when the manifest does not say). */
export function bundleMismatch(manifest: BundleManifest | undefined,
  version: readonly number[]): string | undefined {
  const pythons = manifest?.pythons;
  if (!Array.isArray(pythons) || pythons.length === 0) {
    return undefined;
  }
  const mine = `${version[0]}.${version[1]}`;
  if (pythons.includes(mine)) {
    return undefined;
  }
  return `the servelint bundled with the extension has compiled modules for CPython ${pythons.join(", ")}` +
    `${manifest?.platform ? ` on ${manifest.platform}` : ""}, not for Python ${mine}; ` +
    "choose another interpreter with servelint.interpreter, or install servelint into the environment " +
    "and set servelint.importStrategy to fromEnvironment.";
}
