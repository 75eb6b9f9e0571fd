// Whether the server libraries bundled with the extension load in the chosen Python, and
// what runs instead when they do not. No 'vscode' import.
//
// Each .vsix holds the compiled modules (tree-sitter, PyYAML) of one platform (linux-x64,
// darwin-arm64, ...), or none (the universal package, which imports them from the
// interpreter's environment). Before the server starts with the bundled libraries, the
// interpreter imports those modules once with the server's own PYTHONPATH; when they do not
// load (another platform's package, a musl Linux, a Python without a bundled build, a
// damaged install, a universal package in an environment without them), the server is
// started with the environment's servelint instead, or not at all, and the user gets one
// message saying why and what to install, instead of an error on every file.

import * as path from "node:path";
import { displayArgv, execRunner, Runner } from "./interpreter";
import { LaunchInput, LaunchPlan, serverCommand } from "./launch";

/** The marker line the bundle probe prints before its JSON. */
const MARKER = "SERVELINT-BUNDLE-PROBE ";

/** Run with the server's environment (PYTHONPATH) and working directory: where servelint
 * would be imported from (found, not run), and whether the modules with compiled code
 * import, the bash grammar included. PyYAML imports even without its compiled module (it
 * falls back to pure Python); tree-sitter and tree-sitter-bash do not. */
export const BUNDLE_PROBE_CODE = [
  "import importlib, importlib.util, json",
  "r = {}",
  "def load(n):",
  "    try:",
  "        m = importlib.import_module(n)",
  "        r[n] = {'file': getattr(m, '__file__', None) or ''}",
  "        return m",
  "    except Exception as e:",
  "        r[n] = {'error': type(e).__name__ + ': ' + str(e)}",
  "s = importlib.util.find_spec('servelint')",
  "r['servelint'] = {'file': s.origin or ''} if s else {'error': \"ModuleNotFoundError: No module named 'servelint'\"}",
  "load('yaml')",
  "ts = load('tree_sitter')",
  "tsb = load('tree_sitter_bash')",
  "if ts and tsb:",
  "    try:",
  "        ts.Parser(ts.Language(tsb.language())).parse(b'echo')",
  "    except Exception as e:",
  "        r['tree_sitter_bash']['error'] = 'its grammar does not load into tree_sitter ' + \\",
  "            getattr(ts, '__version__', '') + ': ' + type(e).__name__ + ': ' + str(e)",
  "print('" + MARKER + "' + json.dumps(r))",
].join("\n");

export interface ModuleReport {
  /** Where the module was imported (or, for servelint, found) from. */
  file?: string;
  error?: string;
}

/** The probe's report by module, or undefined when its line is not in the output. */
export function parseBundleProbe(stdout: string): Record<string, ModuleReport> | undefined {
  const line = stdout.split(/\r?\n/).find((l) => l.startsWith(MARKER));
  if (!line) {
    return undefined;
  }
  try {
    const data = JSON.parse(line.slice(MARKER.length)) as unknown;
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      return undefined;
    }
    const out: Record<string, ModuleReport> = {};
    for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
      const v = (value ?? {}) as Record<string, unknown>;
      out[name] = {
        ...(typeof v.file === "string" ? { file: v.file } : {}),
        ...(typeof v.error === "string" ? { error: v.error } : {}),
      };
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Whether `file` lies inside `folder` (case-insensitively on Windows). */
export function insideFolder(file: string, folder: string, platform: NodeJS.Platform = process.platform): boolean {
  const p = platform === "win32" ? path.win32 : path.posix;
  const norm = (x: string) => (platform === "win32" ? p.resolve(x).toLowerCase() : p.resolve(x));
  const rel = p.relative(norm(folder), norm(file));
  return rel !== "" && !rel.startsWith("..") && !p.isAbsolute(rel);
}

const MAX_ERROR = 160;

function shorten(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > MAX_ERROR ? `${one.slice(0, MAX_ERROR - 1)}…` : one;
}

/** What is wrong with the bundle according to the probe's report: servelint not found
 * in the bundled libraries, and each module that did not import. Empty: it loads. */
export function bundleProblems(report: Record<string, ModuleReport>, bundledLibs: string,
  platform: NodeJS.Platform = process.platform): string[] {
  const problems: string[] = [];
  const servelint = report.servelint;
  if (!servelint || servelint.error || !servelint.file || !insideFolder(servelint.file, bundledLibs, platform)) {
    problems.push(`servelint is missing from ${bundledLibs}`);
  }
  for (const [name, r] of Object.entries(report)) {
    if (name !== "servelint" && r.error) {
      problems.push(`${name}: ${shorten(r.error)}`);
    }
  }
  return problems;
}

/** Runs the probe with the plan's interpreter, environment and working directory.
 * Returns the problems (empty when the bundle loads). */
export async function checkBundle(plan: LaunchPlan, interpreter: string[], bundledLibs: string,
  run: Runner = execRunner, platform: NodeJS.Platform = process.platform): Promise<string[]> {
  const [command, ...extra] = interpreter;
  const result = await run(command, [...extra, "-c", BUNDLE_PROBE_CODE], plan.cwd, plan.env);
  const report = parseBundleProbe(result.stdout);
  if (!report) {
    const detail = (result.stderr || result.stdout).trim().split(/\r?\n/).slice(-2).join(" ");
    return [`${displayArgv(interpreter)} could not check the bundled libraries (exit ${result.code ?? "?"}` +
      `${detail ? `: ${shorten(detail)}` : ""})`];
  }
  return bundleProblems(report, bundledLibs, platform);
}

/** VS Code's name for this machine's platform (`vsce package --target`), or undefined when
 * servelint builds no package for it. */
export function vscodeTarget(platform: NodeJS.Platform, arch: string): string | undefined {
  const targets: Record<string, string> = {
    "linux-x64": "linux-x64", "linux-arm64": "linux-arm64", "darwin-x64": "darwin-x64",
    "darwin-arm64": "darwin-arm64", "win32-x64": "win32-x64",
  };
  return targets[`${platform}-${arch}`];
}

/** bundled/manifest.json, written by client/scripts/bundle_server.py (the fields read here). */
export interface BundleTarget {
  /** linux-x64, darwin-arm64, ..., universal. */
  target?: string;
  /** The universal package: what the environment must provide (PyYAML, tree-sitter, ...). */
  environmentDependencies?: string[];
}

export interface FallbackInput {
  /** How the bundled server would start (the plan serverCommand made with useBundled). */
  launch: LaunchInput;
  problems: string[];
  manifest: BundleTarget | undefined;
  /** The interpreter's version, e.g. "3.11.7". */
  pythonVersion: string;
  /** This machine's VS Code target (vscodeTarget), if servelint has a package for it. */
  hostTarget: string | undefined;
  /** The extension's version, for the package file name. */
  extensionVersion: string;
}

export interface FallbackOutcome {
  /** What to start; undefined: nothing can run the server. */
  plan?: LaunchPlan;
  /** The one message for the user (undefined when the bundle loads). */
  message?: string;
  /** The short reason for the status item. */
  reason?: string;
}

/** What runs when the bundle check found problems: the environment's servelint when it has
 * one, else nothing; with the message that says why and what to do. */
export function bundleFallback(input: FallbackInput): FallbackOutcome {
  const bundled = serverCommand(input.launch);
  if (input.problems.length === 0) {
    return { plan: bundled };
  }
  const python = `Python ${input.pythonVersion} (${displayArgv(input.launch.interpreter)})`;
  const target = input.manifest?.target;
  const universal = target === "universal";
  const deps = input.manifest?.environmentDependencies?.length
    ? input.manifest.environmentDependencies.join(", ") : "PyYAML, tree-sitter and tree-sitter-bash";
  const what = universal
    ? `the universal servelint package takes ${deps} from the interpreter's environment, and they do not load in ${python}`
    : `the server libraries bundled with this extension${target ? ` (${target})` : ""} do not load in ${python}`;
  const details = `(${input.problems.join("; ")})`;
  const pkg = input.hostTarget ? `servelint-${input.hostTarget}-${input.extensionVersion}.vsix` : undefined;
  const install = `${displayArgv(input.launch.interpreter)} -m pip install servelint`;
  let remedy: string;
  if (pkg && input.hostTarget !== target) {
    remedy = `Install the servelint package built for this machine (${pkg})`;
  } else if (universal) {
    remedy = `Install them into that environment (${install})`;
  } else {
    remedy = "Reinstall the extension";
  }
  if (input.launch.environmentHasServelint) {
    return {
      plan: serverCommand({ ...input.launch, strategy: "fromEnvironment" }),
      message: `servelint: ${what} ${details}; running the servelint installed in that environment instead. ` +
        `${remedy} to run the bundled one.`,
      reason: `bundled libraries do not load here ${details}`,
    };
  }
  return {
    message: `servelint cannot start: ${what} ${details}, and servelint is not installed in that environment. ` +
      `${remedy}, or install servelint into that Python (${install}), or set servelint.interpreter to a Python ` +
      "that has servelint installed.",
    reason: `bundled libraries do not load in ${python} and it has no servelint`,
  };
}
