// Settings as the server wants them. No 'vscode' import: unit-tested with node's runner.

import * as os from "node:os";
import * as path from "node:path";

/** The servelint.* settings the server reads (initializationOptions.settings and the
 * workspace/configuration section "servelint"). Client-only settings (interpreter,
 * importStrategy, trace) are not sent. */
export interface ServerSettings {
  enable: boolean;
  select: string[];
  ignore: string[];
  severity: Record<string, string>;
  rulePacks: string[];
  sglangVersion: string;
  gpu: string;
  maxFileBytes: number;
  configurationPreference: string;
  ignoreSuppressions: boolean;
}

export const DEFAULT_SETTINGS: ServerSettings = {
  enable: true,
  select: [],
  ignore: [],
  severity: {},
  rulePacks: [],
  sglangVersion: "0.5.23",
  gpu: "",
  maxFileBytes: 5 * 1024 * 1024,
  configurationPreference: "editorFirst",
  ignoreSuppressions: false,
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
    gpu: pick("gpu"),
    maxFileBytes: pick("maxFileBytes"),
    configurationPreference: pick("configurationPreference"),
    ignoreSuppressions: pick("ignoreSuppressions"),
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

/** The servelint.interpreter setting, variables expanded; [] when unset, blank or untrusted. */
export function interpreterSetting(
  source: SettingsSource,
  workspaceFolder: string | undefined,
  trusted: boolean,
): string[] {
  if (!trusted) {
    return [];
  }
  const raw = source.get<unknown>("interpreter");
  const list = typeof raw === "string" ? [raw] : isStringArray(raw) ? raw : [];
  const expanded = list.map((x) => expandVariables(x, workspaceFolder));
  if (expanded.length === 0 || expanded[0].trim() === "") {
    return [];
  }
  return expanded;
}
