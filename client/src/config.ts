// Settings as the server wants them. No 'vscode' import: unit-tested with node's runner.

import * as os from "node:os";
import * as path from "node:path";

/** The servelint.* settings the server reads (initializationOptions.settings and the
 * workspace/configuration section "servelint"). Client-only settings (interpreter, path,
 * importStrategy, logLevel, trace) are not sent. */
export interface ServerSettings {
  enable: boolean;
  select: string[];
  ignore: string[];
  severity: Record<string, string>;
  rulePacks: string[];
  sglangVersion: string;
  /** "" : no upgrade check. */
  targetVersion: string;
  gpu: string;
  maxFileBytes: number;
  configurationPreference: string;
  ignoreSuppressions: boolean;
  /** Which of the server's messages become notifications (window/showMessage); the rest
   * only go to the servelint output. */
  showNotifications: ShowNotifications;
}

export const SHOW_NOTIFICATIONS = ["off", "onError", "onWarning", "always"] as const;
export type ShowNotifications = typeof SHOW_NOTIFICATIONS[number];

export const LOG_LEVELS = ["error", "warning", "info", "debug"] as const;
/** servelint.logLevel: the server's `--log-level`. */
export type LogLevel = typeof LOG_LEVELS[number];
export const DEFAULT_LOG_LEVEL: LogLevel = "warning";

export const DEFAULT_SETTINGS: ServerSettings = {
  enable: true,
  select: [],
  ignore: [],
  severity: {},
  rulePacks: [],
  sglangVersion: "auto",
  targetVersion: "",
  gpu: "",
  maxFileBytes: 5 * 1024 * 1024,
  configurationPreference: "editorFirst",
  ignoreSuppressions: false,
  showNotifications: "onWarning",
};

export type ImportStrategy = "useBundled" | "fromEnvironment";

export interface InitializationOptions {
  settings: ServerSettings;
  workspaceTrusted: boolean;
  clientName: "vscode";
}

/** Anything with a `get(key)`: a vscode.WorkspaceConfiguration or a plain-object adapter. */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
}

export function fromObject(obj: Record<string, unknown>): SettingsSource {
  return { get: <T>(key: string) => obj[key] as T | undefined };
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** Expands ${workspaceFolder}, ${userHome}, ${env:NAME} and a leading ~ in a setting value. */
export function expandVariables(
  value: string,
  workspaceFolder: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  home: string = os.homedir(),
): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g,
    (whole, name: string, envName: string | undefined) => {
      if (name === "workspaceFolder") {
        return workspaceFolder ?? whole;
      }
      if (name === "userHome") {
        return home;
      }
      return env[envName ?? ""] ?? "";
    });
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) {
    out = home + out.slice(1);
  }
  return out;
}

/** A rule pack path as the server should read it: variables expanded, relative paths taken
 * from the workspace folder (the server's working directory is not the workspace). */
export function resolvePath(p: string, workspaceFolder: string | undefined): string {
  const expanded = expandVariables(p.trim(), workspaceFolder);
  if (!expanded || path.isAbsolute(expanded) || workspaceFolder === undefined) {
    return expanded;
  }
  return path.join(workspaceFolder, expanded);
}

/** The server settings from the editor's servelint.* values. Malformed values are passed
 * through unchanged (the server reports them and keeps its defaults); missing values get
 * the defaults. In an untrusted workspace, rule packs from settings are dropped. */
export function serverSettings(
  source: SettingsSource,
  workspaceFolder: string | undefined,
  trusted: boolean,
): ServerSettings {
  const pick = <K extends keyof ServerSettings>(key: K): ServerSettings[K] => {
    const v = source.get<ServerSettings[K]>(key);
    return v === undefined || v === null ? structuredClone(DEFAULT_SETTINGS[key]) : v;
  };
  const packs = pick("rulePacks");
  return {
    enable: pick("enable"),
    select: pick("select"),
    ignore: pick("ignore"),
    severity: pick("severity"),
    rulePacks: !trusted ? [] : isStringArray(packs)
      ? packs.filter((p) => p.trim() !== "").map((p) => resolvePath(p, workspaceFolder))
      : packs,
    sglangVersion: pick("sglangVersion"),
    targetVersion: pick("targetVersion"),
    gpu: pick("gpu"),
    maxFileBytes: pick("maxFileBytes"),
    configurationPreference: pick("configurationPreference"),
    ignoreSuppressions: pick("ignoreSuppressions"),
    showNotifications: pick("showNotifications"),
  };
}

export function initializationOptions(settings: ServerSettings, trusted: boolean): InitializationOptions {
  return { settings, workspaceTrusted: trusted, clientName: "vscode" };
}

export function importStrategy(source: SettingsSource, trusted: boolean): ImportStrategy {
  if (!trusted) {
    return "useBundled";
  }
  return source.get<string>("importStrategy") === "fromEnvironment" ? "fromEnvironment" : "useBundled";
}

/** A command-line setting (a program and its extra arguments: one string or a list),
 * variables expanded; [] when unset, blank or untrusted (both are restricted settings). */
function commandSetting(
  source: SettingsSource,
  key: "interpreter" | "path",
  workspaceFolder: string | undefined,
  trusted: boolean,
): string[] {
  if (!trusted) {
    return [];
  }
  const raw = source.get<unknown>(key);
  const list = typeof raw === "string" ? [raw] : isStringArray(raw) ? raw : [];
  const expanded = list.map((x) => expandVariables(x, workspaceFolder));
  if (expanded.length === 0 || expanded[0].trim() === "") {
    return [];
  }
  return expanded;
}

/** The servelint.interpreter setting, variables expanded; [] when unset, blank or untrusted. */
export function interpreterSetting(
  source: SettingsSource,
  workspaceFolder: string | undefined,
  trusted: boolean,
): string[] {
  return commandSetting(source, "interpreter", workspaceFolder, trusted);
}

/** servelint.path: a `servelint` executable and optional extra arguments, variables
 * expanded, a relative path containing a separator taken from the workspace folder;
 * [] when unset, blank or untrusted (it is a restricted setting). */
export function pathSetting(
  source: SettingsSource,
  workspaceFolder: string | undefined,
  trusted: boolean,
): string[] {
  const expanded = commandSetting(source, "path", workspaceFolder, trusted);
  if (expanded.length === 0) {
    return [];
  }
  const first = expanded[0].trim();
  const hasSeparator = first.includes("/") || first.includes("\\");
  expanded[0] = hasSeparator && !path.isAbsolute(first) && workspaceFolder !== undefined
    ? path.join(workspaceFolder, first) : first;
  return expanded;
}

/** servelint.logLevel, "warning" when unset or not one of the levels. */
export function logLevel(source: SettingsSource): LogLevel {
  const raw = source.get<unknown>("logLevel");
  return (LOG_LEVELS as readonly unknown[]).includes(raw) ? raw as LogLevel : DEFAULT_LOG_LEVEL;
}

/** The workspace folder whose settings a scope gets: the folder holding it, else (a file
 * outside every folder, or no scope) the only folder of a single-folder workspace, else
 * none: in a multi-root workspace nothing but a folder's own scope names a folder. */
export function folderForScope<F>(containing: F | undefined, folders: readonly F[]): F | undefined {
  return containing ?? (folders.length === 1 ? folders[0] : undefined);
}

/** The folder whose settings start the server (interpreter, servelint.path,
 * initializationOptions): the folder of the active document, else of the first open
 * document servelint reads, else of any open document, else the first folder. Each
 * argument is the folder holding that document (undefined: outside every folder). */
export function startFolder<F>(
  active: F | undefined,
  linted: readonly (F | undefined)[],
  opened: readonly (F | undefined)[],
  folders: readonly F[],
): F | undefined {
  return active ?? linted.find((f) => f !== undefined) ?? opened.find((f) => f !== undefined) ?? folders[0];
}
