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
