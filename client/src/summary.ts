// The answer of the server's "servelint.server.lintWorkspace" command, for a message.
// No 'vscode' import.

export const LINT_WORKSPACE_COMMAND = "servelint.server.lintWorkspace";

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A one-line summary of the server's reply: a string is shown as it is, an object
 * {files, findings} (numbers, or lists whose lengths count) is counted, anything else
 * gets a generic line. */
export function formatLintSummary(result: unknown): string {
  if (typeof result === "string" && result.trim() !== "") {
    return result.trim();
  }
  if (result !== null && typeof result === "object" && !Array.isArray(result)) {
    const r = result as Record<string, unknown>;
    const count = (v: unknown): number | undefined =>
      typeof v === "number" && Number.isFinite(v) ? v : Array.isArray(v) ? v.length : undefined;
    const files = count(r.files);
    const findings = count(r.findings);
    if (files !== undefined || findings !== undefined) {
      const parts: string[] = [];
      if (files !== undefined) {
        parts.push(`linted ${plural(files, "file")}`);
      }
      if (findings !== undefined) {
        parts.push(findings === 0 ? "no findings" : plural(findings, "finding"));
      }
      return `servelint: ${parts.join(", ")}.`;
    }
  }
  return "servelint: workspace linted.";
}

// --- the language status item -------------------------------------------------------

/** The server's status command: arguments [documentUri], answer a ServerStatus. */
export const STATUS_COMMAND = "servelint.server.status";

/** What `servelint.server.status` answers; `location` is the folder of the servelint
 * package the server runs from. */
export interface ServerStatus {
  servelint?: string;
  /** The release(s) the document's launches are judged by ("0.4.9.post2", "0.4.6, 0.5.23"). */
  sglang?: string;
  /** Why: "0.4.9.post2: image lmsysorg/sglang:v0.4.9.post2-cu126 (line 3)". */
  sglangFrom?: string;
  python?: string;
  pythonVersion?: string;
  location?: string;
}

/** The known string fields of the status reply, or undefined when it is not an object. */
export function parseServerStatus(reply: unknown): ServerStatus | undefined {
  if (reply === null || typeof reply !== "object" || Array.isArray(reply)) {
    return undefined;
  }
  const r = reply as Record<string, unknown>;
  const out: ServerStatus = {};
  for (const key of ["servelint", "sglang", "sglangFrom", "python", "pythonVersion", "location"] as const) {
    const v = r[key];
    if (typeof v === "string" && v.trim() !== "") {
      out[key] = v.trim();
    }
  }
  return out;
}

/** What the client knows without asking the server. */
export interface ClientStatus {
  /** initializeResult.serverInfo.version, once the server answered initialize. */
  servelint?: string;
  /** servelint.sglangVersion for the document (the project file may still change it). */
  sglang: string;
  /** The interpreter the probe found (absent with servelint.path). */
  python?: string;
  pythonVersion?: string;
  uses: "bundled" | "environment" | "executable";
  /** servelint.path's executable, when that started the server. */
  executable?: string;
  /** The extension's bundled/libs, to tell a bundled location from an environment's. */
  bundledLibs: string;
  /** Set when the bundled libraries do not load and the environment's servelint runs
   * instead: why. */
  fallback?: string;
}

export type StatusState =
  | { kind: "starting" }
  | { kind: "running"; client: ClientStatus; server?: ServerStatus }
  | { kind: "failed"; reason: string };

export interface StatusView {
  text: string;
  /** Short: the hover sits right of the status bar's {} and has little room. */
  detail: string;
  /** The full paths, for the tooltip of the item's command. */
  tooltip: string;
  /** Shown with error severity. */
  error: boolean;
  busy: boolean;
}

/** A path short enough for the status hover: the last two parts behind "…" once it is
 * longer than `max` characters (`/root/.pyenv/versions/3.11.7/bin/python3` ->
 * `…/bin/python3`); the full path is in the tooltip. */
export function shortPath(p: string, max = 28): string {
  if (p.length <= max) {
    return p;
  }
  const sep = p.includes("\\") && !p.includes("/") ? "\\" : "/";
  const parts = p.split(sep).filter((x) => x !== "");
  return parts.length <= 2 ? p : `…${sep}${parts.slice(-2).join(sep)}`;
}

/** Whether `location` lies inside `folder` (both absolute paths). */
function inside(location: string, folder: string): boolean {
  const norm = (p: string) => p.replace(/\\/g, "/").replace(/\/+$/, "");
  const loc = norm(location);
  const dir = norm(folder);
  return dir !== "" && (loc === dir || loc.startsWith(dir + "/"));
}

/** The text of servelint's language status item. */
export function statusView(state: StatusState): StatusView {
  if (state.kind === "starting") {
    return { text: "servelint: starting", detail: "", tooltip: "", error: false, busy: true };
  }
  if (state.kind === "failed") {
    return { text: "servelint: not running", detail: state.reason, tooltip: state.reason, error: true, busy: false };
  }
  const c = state.client;
  const s = state.server ?? {};
  const version = s.servelint ?? c.servelint;
  const sglang = s.sglang ?? c.sglang;
  const python = s.python ?? c.python;
  const pythonVersion = s.pythonVersion ?? c.pythonVersion;
  // [short form, full form] of each part: the hover sits right of the status bar's {}
  // and has little room, so paths go to the tooltip.
  let libraries: [string, string];
  if (s.location) {
    libraries = inside(s.location, c.bundledLibs) ? ["bundled", `bundled libraries (${s.location})`]
      : ["environment", `environment libraries (${s.location})`];
  } else if (c.uses === "executable") {
    libraries = [`servelint.path`, `servelint.path (${c.executable ?? "?"})`];
  } else {
    libraries = c.uses === "bundled" ? ["bundled", "bundled libraries"] : ["environment", "environment libraries"];
  }
  if (c.fallback) {
    libraries = [`${libraries[0]} (fallback)`, `${libraries[1]}: the ${c.fallback}`];
  }
  const interpreter = (p: string | undefined) => (python || pythonVersion
    ? `Python ${[pythonVersion, p].filter((x) => x).join(" ")}` : "Python unknown");
  return {
    text: `servelint${version ? ` ${version}` : ""} · SGLang ${sglang}`,
    detail: `${pythonVersion ? `Python ${pythonVersion}` : interpreter(python && shortPath(python))} · ${libraries[0]}`,
    tooltip: `${s.sglangFrom ? `SGLang ${s.sglangFrom} · ` : ""}${interpreter(python)} · ${libraries[1]}`,
    error: false,
    busy: false,
  };
}
