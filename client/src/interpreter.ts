// Which Python runs the server, and whether it can. No 'vscode' import.

import { execFile } from "node:child_process";

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export type InterpreterSource = "setting" | "pythonExtension" | "path";

export interface Candidate {
  /** The interpreter and extra arguments, e.g. ["/venv/bin/python"] or ["py", "-3.11"]. */
  argv: string[];
  source: InterpreterSource;
}

export interface ResolveInput {
  trusted: boolean;
  /** servelint.interpreter, variables already expanded ([] when unset). */
  setting: string[];
  /** The Python extension's active environment executable for the workspace, if any. */
  pythonExtension?: string;
  platform: NodeJS.Platform;
}

/** The interpreters to try, in order. A servelint.interpreter setting is the only
 * candidate: if it is broken the user must hear about it, not get another Python.
 * An untrusted workspace only uses python3 from PATH (neither the setting nor the Python
 * extension's environment, which may live inside the workspace). */
export function interpreterCandidates(input: ResolveInput): Candidate[] {
  const fromPath: Candidate[] = input.platform === "win32"
    ? [{ argv: ["python3"], source: "path" }, { argv: ["python"], source: "path" }]
    : [{ argv: ["python3"], source: "path" }];
  if (!input.trusted) {
    return fromPath;
  }
  if (input.setting.length > 0) {
    return [{ argv: [...input.setting], source: "setting" }];
  }
  if (input.pythonExtension) {
    return [{ argv: [input.pythonExtension], source: "pythonExtension" }, ...fromPath];
  }
  return fromPath;
}

export interface ProbeResult {
  version: [number, number, number];
  executable: string;
  /** Whether `servelint` is importable in that environment (without the bundled libs). */
  hasServelint: boolean;
}

/** Printed by the probe: only sys and importlib.util.find_spec, which locates the package
 * without running it. The probe runs the user's chosen interpreter and nothing else. */
export const PROBE_CODE =
  "import sys, json, importlib.util\n" +
  "print('SERVELINT-PROBE ' + json.dumps({'version': list(sys.version_info[:3]), " +
  "'executable': sys.executable, 'servelint': importlib.util.find_spec('servelint') is not None}))";

/** Parses the probe's output. Returns undefined when it is not there. */
export function parseProbeOutput(stdout: string): ProbeResult | undefined {
  const line = stdout.split(/\r?\n/).find((l) => l.startsWith("SERVELINT-PROBE "));
  if (!line) {
    return undefined;
  }
  try {
    const data = JSON.parse(line.slice("SERVELINT-PROBE ".length)) as {
      version?: unknown; executable?: unknown; servelint?: unknown;
    };
    const v = data.version;
    if (!Array.isArray(v) || v.length < 2 || !v.every((x) => Number.isInteger(x))) {
      return undefined;
    }
    return {
      version: [v[0] as number, v[1] as number, (v[2] as number | undefined) ?? 0],
      executable: typeof data.executable === "string" ? data.executable : "",
      hasServelint: data.servelint === true,
    };
  } catch {
    return undefined;
  }
}

/** Parses a plain `Python 3.11.7` / `3.11.7` version string. */
export function parseVersionString(text: string): [number, number, number] | undefined {
  const m = /(?:^|\s|Python\s+)(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!m) {
    return undefined;
  }
  return [Number(m[1]), Number(m[2]), m[3] === undefined ? 0 : Number(m[3])];
}

export function versionAtLeast(v: readonly number[], min: readonly number[] = MIN_PYTHON): boolean {
  for (let i = 0; i < min.length; i++) {
    const a = v[i] ?? 0;
    if (a !== min[i]) {
      return a > min[i];
    }
  }
  return true;
}

export type CheckOutcome =
  | { ok: true; candidate: Candidate; probe: ProbeResult }
  | { ok: false; candidate: Candidate; reason: string };

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started at all (ENOENT, EACCES...). */
  spawnError?: NodeJS.ErrnoException;
}

/** Runs a command; `env`, when given, is its whole environment (else the extension's). */
export type Runner = (command: string, args: string[], cwd: string | undefined,
  env?: NodeJS.ProcessEnv) => Promise<RunResult>;

export const execRunner: Runner = (command, args, cwd, env) => new Promise((resolve) => {
  execFile(command, args, { cwd, env, timeout: 20000, windowsHide: true, encoding: "utf8" },
    (error, stdout, stderr) => {
      const err = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
      if (err && typeof err.code === "string") {
        resolve({ code: null, stdout: stdout ?? "", stderr: stderr ?? "", spawnError: err });
        return;
      }
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout: stdout ?? "", stderr: stderr ?? "" });
    });
});

export function displayArgv(argv: string[]): string {
  return argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

/** Runs the candidate with the probe and says whether it can run the server. */
export async function checkInterpreter(candidate: Candidate, cwd: string | undefined,
  run: Runner = execRunner): Promise<CheckOutcome> {
  const [command, ...extra] = candidate.argv;
  const shown = displayArgv(candidate.argv);
  const result = await run(command, [...extra, "-c", PROBE_CODE], cwd);
  if (result.spawnError) {
    const why = result.spawnError.code === "ENOENT" ? "was not found"
      : result.spawnError.code === "EACCES" ? "is not executable"
      : `could not be started (${result.spawnError.code ?? result.spawnError.message})`;
    return { ok: false, candidate, reason: `${shown} ${why}` };
  }
  const probe = parseProbeOutput(result.stdout);
  if (result.code !== 0 || !probe) {
    const detail = (result.stderr || result.stdout).trim().split(/\r?\n/).slice(-3).join(" ");
    const version = parseVersionString(result.stderr);
    if (version && !versionAtLeast(version)) {
      return { ok: false, candidate, reason: `${shown} is Python ${version.join(".")}; servelint needs ${MIN_PYTHON.join(".")} or newer` };
    }
    return { ok: false, candidate, reason: `${shown} is not a working Python interpreter (exit ${result.code ?? "?"}${detail ? `: ${detail}` : ""})` };
  }
  if (!versionAtLeast(probe.version)) {
    return { ok: false, candidate, reason: `${shown} is Python ${probe.version.join(".")}; servelint needs ${MIN_PYTHON.join(".")} or newer` };
  }
  return { ok: true, candidate, probe };
}

/** Tries the candidates in order; the first usable one wins. */
export async function findInterpreter(candidates: Candidate[], cwd: string | undefined,
  run: Runner = execRunner): Promise<{ found?: CheckOutcome & { ok: true }; failures: string[] }> {
  const failures: string[] = [];
  for (const c of candidates) {
    const outcome = await checkInterpreter(c, cwd, run);
    if (outcome.ok) {
      return { found: outcome, failures };
    }
    failures.push(outcome.reason);
  }
  return { failures };
}

/** The message shown when no interpreter can run the server. */
export function noInterpreterMessage(failures: string[], usedSetting: boolean): string {
  const why = failures.length ? ` (${failures.join("; ")})` : "";
  const what = usedSetting
    ? "The Python interpreter in servelint.interpreter cannot run the servelint server"
    : "servelint found no Python 3.10 or newer to run its server";
  return `${what}${why}. Set servelint.interpreter to a Python 3.10+ interpreter, for example ["/usr/bin/python3"].`;
}
