// The VS Code end-to-end test of the packaged extension (docs/vscode-e2e.md).
//
// The package for this machine (servelint-linux-x64-0.1.0.vsix; `vsce package --target`,
// client/scripts/bundle_server.py) is installed into a fresh code-server 4.100.3 (VS Code 1.100.3),
// which Debian's chromium, driven by puppeteer-core, opens on a copy of fixtures/ (or of
// fixtures/multi-root/, as a multi-root workspace). The test types what a user types
// (Ctrl+P, Ctrl+G, F1 + command name, Ctrl+., Ctrl+S), clicks what a user clicks, and
// reads what a user reads: the Problems panel, hovers, the language status, the editor
// and notebook text, notifications, the servelint output channel, and the saved files on
// disk.
//
// Run by `make vscode-e2e` (part of `make test`) after client/e2e/setup.sh installed
// code-server and puppeteer-core into client/e2e/.cache/. A screenshot of every check is
// saved into client/e2e/out/ (pass or fail), with code-server's log and VS Code's logs.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFile } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const CACHE = path.join(HERE, ".cache");
const CODE_SERVER = path.join(CACHE, "node_modules/code-server/out/node/entry.js");
const FIXTURES = path.join(HERE, "fixtures");
const MULTI_ROOT = path.join(FIXTURES, "multi-root");
const OUT = path.join(HERE, "out");
const TARGET = `${process.platform}-${process.arch}`;
const VERSION = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")).version;
const VSIX = path.resolve(process.env.SERVELINT_VSIX ?? path.join(REPO, `servelint-${TARGET}-${VERSION}.vsix`));
const CHROMIUM = process.env.SERVELINT_E2E_CHROMIUM ?? "/usr/bin/chromium";

/** How long a finding, hover or notification may take to show up. The first finding of a
 * session waits for the extension to activate and the server to start. */
const SHOW_TIMEOUT = 60_000;
const TEST_TIMEOUT = 180_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- what has to be there ----------------------------------------------------------------

function requireInstalled() {
  if (!fs.existsSync(CODE_SERVER) || !fs.existsSync(path.join(CACHE, "node_modules/puppeteer-core"))) {
    throw new Error(`code-server and puppeteer-core are not installed in ${CACHE}: run client/e2e/setup.sh (make vscode-e2e does)`);
  }
  if (!fs.existsSync(VSIX)) {
    throw new Error(`${VSIX} does not exist: build it with make client`);
  }
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} does not exist: client/e2e/setup.sh installs Debian's chromium`);
  }
  return createRequire(path.join(CACHE, "package.json"))("puppeteer-core");
}

// --- polling -----------------------------------------------------------------------------

/** Calls probe() until it returns something truthy; throws after timeoutMs with the last
 * thing it saw, so that a failure says what the screen showed instead. */
async function waitUntil(what, probe, timeoutMs = SHOW_TIMEOUT, intervalMs = 200) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last && (typeof last !== "object" || last.ok !== false)) {
        return last;
      }
    } catch (err) {
      last = `error: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) {
      const seen = last !== null && typeof last === "object" ? JSON.stringify(last.seen ?? last, null, 1) : String(last);
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}; last seen: ${seen}`);
    }
    await sleep(intervalMs);
  }
}

// --- processes ---------------------------------------------------------------------------

/** code-server process groups still alive, killed on any exit of this process. */
const liveGroups = new Set();
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
process.on("exit", () => {
  for (const pid of liveGroups) {
    killGroup(pid, "SIGKILL");
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => process.exit(130));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 120_000, ...options }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stdout}\n${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** SERVELINT_E2E_TRACE=1: the LSP traffic in the servelint output; SERVELINT_E2E_LOG=debug:
 * the server's debug log there (out/*-vscode-logs). */
function debugSettings() {
  const settings = process.env.SERVELINT_E2E_TRACE ? { "servelint.trace.server": "verbose" } : {};
  if (process.env.SERVELINT_E2E_LOG) {
    settings["servelint.logLevel"] = process.env.SERVELINT_E2E_LOG;
  }
  return settings;
}

// --- a code-server session ---------------------------------------------------------------

let shotCount = 0;

class Session {
  /**
   * @param name used for the temp dir, log and screenshot names
   * @param userSettings VS Code user settings of this session (fresh user-data-dir)
   * @param workspaceSettings the workspace's .vscode/settings.json, undefined: none
   * @param fixtures the directory copied as the workspace (fixtures/ without multi-root/)
   * @param workspaceFile a .code-workspace file in it: the session opens that (multi-root)
   *   instead of the folder
   * @param ready an explorer row whose label starts with this shows the workbench is up
   */
  constructor(name, { userSettings = {}, workspaceSettings, fixtures = FIXTURES, workspaceFile, ready = "serve.sh" } = {}) {
    this.name = name;
    this.userSettings = userSettings;
    this.workspaceSettings = workspaceSettings;
    this.fixtures = fixtures;
    this.workspaceFile = workspaceFile;
    this.ready = ready;
  }

  async start() {
    const puppeteer = requireInstalled();
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), `servelint-e2e-${this.name}-`));
    const dir = (name) => {
      const d = path.join(this.root, name);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };
    this.extensionsDir = dir("extensions");
    this.userDataDir = dir("user-data");
    this.workspace = dir("workspace");
    // fixtures/multi-root/ is the multi-root session's, not a file of the others.
    fs.cpSync(this.fixtures, this.workspace, { recursive: true, filter: (src) => src === this.fixtures || src !== MULTI_ROOT });
    if (this.workspaceSettings) {
      this.writeWorkspaceSettings(this.workspaceSettings);
    }
    if (this.workspaceFile && Object.keys(debugSettings()).length) {
      // A multi-root workspace's window settings are in its .code-workspace file.
      const file = path.join(this.workspace, this.workspaceFile);
      const ws = JSON.parse(fs.readFileSync(file, "utf8"));
      ws.settings = { ...debugSettings(), ...ws.settings };
      fs.writeFileSync(file, JSON.stringify(ws, null, 2) + "\n");
    }
    fs.mkdirSync(path.join(this.userDataDir, "User"), { recursive: true });
    fs.writeFileSync(path.join(this.userDataDir, "User/settings.json"), JSON.stringify({
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.enableExperiments": false,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "update.mode": "none",
      "chat.disableAIFeatures": true,
      "security.workspace.trust.enabled": false,
      "editor.hover.delay": 100,
      "problems.showCurrentInStatus": false,
      ...this.userSettings,
    }, null, 2));
    const config = path.join(this.root, "code-server.yaml");
    fs.writeFileSync(config, "auth: none\ncert: false\n");
    // XDG_*: code-server keeps its own state (coder.json, ...) there, not in $HOME.
    this.env = {
      ...process.env,
      XDG_DATA_HOME: dir("xdg-data"),
      XDG_CONFIG_HOME: dir("xdg-config"),
      XDG_CACHE_HOME: dir("xdg-cache"),
    };
    const common = ["--config", config, "--extensions-dir", this.extensionsDir, "--user-data-dir", this.userDataDir];

    // The packaged extension, as a user installs it.
    const installed = await run(CODE_SERVER, [...common, "--install-extension", VSIX], { env: this.env });
    assert.match(installed, /was successfully installed/, `installing ${VSIX} into code-server`);

    this.port = await freePort();
    this.log = fs.openSync(path.join(OUT, `${this.name}-code-server.log`), "w");
    this.server = spawn(CODE_SERVER, [...common, "--auth", "none", "--bind-addr", `127.0.0.1:${this.port}`,
      "--disable-telemetry", "--disable-update-check", "--disable-getting-started-override", this.opened()],
    { env: this.env, detached: true, stdio: ["ignore", this.log, this.log] });
    liveGroups.add(this.server.pid);
    this.exited = new Promise((resolve) => this.server.on("exit", (code, signal) => resolve(`exit ${code ?? signal}`)));
    this.exited.then((why) => {
      this.serverGone = why;
    });
    await waitUntil(`code-server on 127.0.0.1:${this.port}`, async () => {
      if (this.serverGone) {
        throw new Error(`code-server stopped (${this.serverGone}); see out/${this.name}-code-server.log`);
      }
      const res = await fetch(`http://127.0.0.1:${this.port}/healthz`).catch(() => undefined);
      return res?.ok;
    }, 60_000);

    this.browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      protocolTimeout: 60_000,
      timeout: 60_000,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--window-size=1600,1000",
        // Connect to nothing but the code-server on loopback.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        `--user-data-dir=${dir("chromium")}`],
      defaultViewport: { width: 1600, height: 1000 },
    });
    this.page = await this.browser.newPage();
    this.page.setDefaultTimeout(30_000);
    const query = this.workspaceFile ? "workspace" : "folder";
    await this.page.goto(`http://127.0.0.1:${this.port}/?${query}=${encodeURIComponent(this.opened())}`,
      { waitUntil: "domcontentloaded", timeout: 60_000 });
    // The workbench is up when the explorer shows the workspace's files (or folders).
    await waitUntil(`the VS Code workbench with ${this.ready} in the explorer`,
      () => this.page.evaluate((ready) => [...document.querySelectorAll(".explorer-folders-view .monaco-list-row")]
        .some((row) => (row.getAttribute("aria-label") ?? "").startsWith(ready)), this.ready));
  }

  /** What code-server opens: the workspace folder, or the .code-workspace file in it. */
  opened() {
    return this.workspaceFile ? path.join(this.workspace, this.workspaceFile) : this.workspace;
  }

  async stop() {
    if (this.browser) {
      await Promise.race([this.browser.close().catch(() => undefined), sleep(10_000)]);
      const proc = this.browser.process();
      if (proc && proc.exitCode === null) {
        proc.kill("SIGKILL");
      }
    }
    if (this.server) {
      killGroup(this.server.pid, "SIGTERM");
      const stopped = await Promise.race([this.exited, sleep(5_000).then(() => false)]);
      if (!stopped) {
        killGroup(this.server.pid, "SIGKILL");
        await Promise.race([this.exited, sleep(5_000)]);
      }
      // The extension host and the language server are in the same process group.
      killGroup(this.server.pid, "SIGKILL");
      liveGroups.delete(this.server.pid);
    }
    this.browser = undefined;
    this.server = undefined;
    if (this.log !== undefined) {
      fs.closeSync(this.log);
      this.log = undefined;
    }
    if (this.root) {
      // VS Code's own logs (window, extension host, the servelint output channel).
      const logs = path.join(this.userDataDir, "logs");
      if (fs.existsSync(logs)) {
        fs.cpSync(logs, path.join(OUT, `${this.name}-vscode-logs`), { recursive: true });
      }
      fs.rmSync(this.root, { recursive: true, force: true });
      this.root = undefined;
    }
  }

  writeWorkspaceSettings(settings) {
    fs.mkdirSync(path.join(this.workspace, ".vscode"), { recursive: true });
    fs.writeFileSync(path.join(this.workspace, ".vscode/settings.json"), JSON.stringify({ ...debugSettings(), ...settings }, null, 2) + "\n");
  }

  file(rel) {
    return path.join(this.workspace, rel);
  }

  /** Runs fn; a screenshot of the window goes to out/ whether it passed or failed. */
  async check(name, fn) {
    const shot = path.join(OUT, `${String(++shotCount).padStart(2, "0")}-${this.name}-${name}.png`);
    let failed;
    try {
      assert.ok(this.page, `the ${this.name} code-server session did not start`);
      return await fn();
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      if (this.page) {
        await this.page.screenshot({ path: failed ? shot.replace(/\.png$/, "-FAILED.png") : shot })
          .catch(() => undefined);
      }
    }
  }

  // --- keyboard ----------------------------------------------------------------------

  /** Presses a combination such as "Control+Shift+KeyM". */
  async chord(combo) {
    const keys = combo.split("+");
    const mods = keys.slice(0, -1);
    for (const k of mods) {
      await this.page.keyboard.down(k);
    }
    await this.page.keyboard.press(keys.at(-1));
    for (const k of mods.reverse()) {
      await this.page.keyboard.up(k);
    }
  }

  async quickInputRows() {
    return this.page.evaluate(() => {
      const widget = document.querySelector(".quick-input-widget");
      if (!widget || widget.style.display === "none") {
        return null;
      }
      return [...widget.querySelectorAll(".quick-input-list .monaco-list-row")]
        .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
        .map((row) => row.getAttribute("aria-label") ?? "");
    });
  }

  async quickInputClosed() {
    await waitUntil("the quick input to close", () => this.page.evaluate(() => {
      const widget = document.querySelector(".quick-input-widget");
      return !widget || widget.style.display === "none";
    }), 10_000);
  }

  /** Types `text` into the quick input opened by `opener`, waits for the first entry to
   * satisfy `first`, and accepts it with Enter. */
  async pick(opener, text, first, what) {
    await opener();
    await waitUntil("the quick input", () => this.page.evaluate(() => {
      const input = document.activeElement;
      return input?.tagName === "INPUT" && input.closest(".quick-input-widget") !== null;
    }), 10_000);
    await this.page.keyboard.type(text);
    await waitUntil(what, async () => {
      const rows = await this.quickInputRows();
      return rows && rows.length > 0 && first(rows[0]) ? true : { ok: false, seen: rows };
    }, 20_000);
    await this.page.keyboard.press("Enter");
    await this.quickInputClosed();
  }

  /** F1, the command's name, Enter. */
  async command(title) {
    await this.pick(() => this.page.keyboard.press("F1"), title,
      (label) => label === title || label.startsWith(`${title},`), `the command "${title}" in the command palette`);
  }

  /** Ctrl+. and the rows of the code action menu ({label, focused}), pressed again (as a
   * user would) when the menu does not open: about one time in four VS Code 1.100 shows
   * no menu although the server answered the request (seen in the server's debug log,
   * SERVELINT_E2E_LOG=debug). */
  async codeActions() {
    const menu = () => this.page.evaluate(() => {
      const rows = [...document.querySelectorAll(".action-widget .monaco-list-row.action")];
      return rows.length ? rows.map((r) => ({ label: r.getAttribute("aria-label"), focused: r.classList.contains("focused") })) : null;
    });
    for (let attempt = 1; ; attempt++) {
      await this.chord("Control+Period");
      try {
        return await waitUntil("the code action menu", menu, attempt < 3 ? 8_000 : 20_000);
      } catch (err) {
        if (attempt >= 3) {
          throw err;
        }
        await this.page.keyboard.press("Escape");
      }
    }
  }

  /** Opens the code action menu and runs the action whose label starts with `label`
   * (arrow keys to it, Enter). */
  async runCodeAction(label) {
    const rows = await this.codeActions();
    const at = rows.findIndex((r) => r.label?.startsWith(label));
    assert.ok(at >= 0, `"${label}" in the code action menu, got ${JSON.stringify(rows)}`);
    const from = rows.findIndex((r) => r.focused);
    for (let i = Math.max(from, 0); i < at; i++) {
      await this.page.keyboard.press("ArrowDown");
    }
    await this.page.keyboard.press("Enter");
  }

  /** The language status item of servelint ({label, detail, links, tooltips}), read from
   * the hover of the status bar's {}: one row per language status item. */
  async languageStatus() {
    const readItem = () => this.page.evaluate(() => {
      const rows = [...document.querySelectorAll(".hover-language-status")].filter((r) => r.offsetParent !== null);
      return rows.map((row) => {
        const left = row.querySelector(".left");
        const parts = ["", ""];
        let part = 0;
        for (const node of left?.childNodes ?? []) {
          if (node.nodeType === 1 && node.classList.contains("separator")) {
            part = 1;
          } else {
            parts[part] += node.textContent;
          }
        }
        return {
          label: parts[0].trim(),
          detail: parts[1].trim(),
          links: [...row.querySelectorAll(".right a.monaco-link")].map((a) => ({ text: a.innerText.trim(), href: a.getAttribute("href") })),
          tooltips: [...row.querySelectorAll(".right a.monaco-link")].map((a) => a.getAttribute("title") ?? a.getAttribute("aria-label") ?? ""),
        };
      });
    });
    for (let attempt = 1; ; attempt++) {
      await waitUntil("the language status item {} in the status bar", () => this.page.evaluate(() =>
        document.querySelector("#status\\.languageStatus a")?.offsetParent != null), 20_000);
      await this.page.click("#status\\.languageStatus a");
      // The item says "servelint: starting" until the server answered.
      try {
        return await waitUntil("servelint's item, past starting, in the language status hover", async () => {
          const rows = await readItem();
          const mine = rows.find((r) => r.label.startsWith("servelint") && !r.label.includes("starting"));
          return mine ?? { ok: false, seen: rows };
        }, attempt < 3 ? 10_000 : 20_000);
      } catch (err) {
        if (attempt >= 3) {
          throw err;
        }
        await this.page.keyboard.press("Escape");
      }
    }
  }

  /** Ctrl+P, the workspace-relative path, Enter; waits for its editor tab. */
  async open(rel) {
    const base = path.basename(rel);
    const dir = path.dirname(rel);
    // A file in a folder: the first entry must be that folder's (its label is "name
    // folder, file results", the folder written "default • k8s" in a multi-root
    // workspace), not a file of the same name opened before (Quick Open lists recently
    // opened files first).
    // A nested folder reads "chart/templates" in a single-root workspace.
    const first = dir === "." ? (label) => label.startsWith(base)
      : (label) => [dir, dir.split("/").join(" • ")].some((d) => `${label},`.startsWith(`${base} ${d},`));
    await this.pick(() => this.chord("Control+KeyP"), rel, first, `${rel} in Quick Open`);
    await waitUntil(`the editor tab of ${rel}`, () => this.page.evaluate((b) => {
      const tab = document.querySelector(".tabs-container .tab.active");
      return (tab?.getAttribute("aria-label") ?? "").startsWith(b) ? true : { ok: false, seen: tab?.getAttribute("aria-label") };
    }, base), 20_000);
  }

  /** Ctrl+G line:column, then checks the status bar shows the cursor there. */
  async goTo(line, column) {
    await this.pick(() => this.chord("Control+KeyG"), `${line}:${column}`, () => true, "the Go to Line input");
    await waitUntil(`the cursor at Ln ${line}, Col ${column}`, () => this.page.evaluate((want) => {
      const text = document.getElementById("status.editor.selection")?.innerText.trim();
      return text === want ? true : { ok: false, seen: text };
    }, `Ln ${line}, Col ${column}`), 10_000);
  }

  // --- reading the screen ------------------------------------------------------------

  /** The lines of the active editor, as displayed. */
  async editorText() {
    return this.linesOf([".part.editor .editor-group-container.active .monaco-editor .view-lines"]);
  }

  /** The text a Monaco editor displays, of the first of `selectors` that is there. */
  async linesOf(selectors) {
    return this.page.evaluate((sels) => {
      const lines = sels.map((sel) => document.querySelector(sel)).find((x) => x);
      if (!lines) {
        return null;
      }
      return [...lines.querySelectorAll(".view-line")]
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map((l) => l.innerText.replace(/\u00a0/g, " "))
        .join("\n");
    }, selectors);
  }

  /** Ctrl+P on a notebook, and its notebook editor shown. */
  async openNotebook(rel) {
    await this.open(rel);
    await waitUntil(`the notebook editor of ${rel}`, () => this.page.evaluate(() =>
      [...document.querySelectorAll(".notebook-editor .cell-list-container")].some((e) => e.offsetParent !== null)), 20_000);
  }

  /** The text of each code cell of the notebook editor shown, in order. */
  async notebookCells() {
    return this.page.evaluate(() => {
      // The notebook editor on screen: VS Code keeps the editors of other open notebooks
      // in the DOM (hidden, still with an offsetParent).
      const editor = [...document.querySelectorAll(".notebook-editor .cell-list-container")].find((e) => {
        const r = e.getBoundingClientRect();
        return e.checkVisibility({ visibilityProperty: true }) && r.width > 0 && r.height > 0
          && r.bottom > 0 && r.right > 0 && r.top < window.innerHeight && r.left < window.innerWidth;
      });
      if (!editor) {
        return null;
      }
      return [...editor.querySelectorAll(".monaco-list-row.code-cell-row")]
        .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
        .map((row) => [...row.querySelectorAll(".cell-editor-container .view-line")]
          .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
          .map((l) => l.innerText.replace(/\u00a0/g, " "))
          .join("\n"));
    });
  }

  /** Types `text` at the end of the notebook cell that has the problem at line:column, as
   * a user does: a click on the problem in the Problems panel, Enter (the cell's editor,
   * focused, the cursor on the finding), Ctrl+End (the end of the cell's text). Going
   * there from the keyboard (Ctrl+End on the notebook, Enter) left the focus on the first
   * cell in about one run of two; a click into the cell can land on the notebook's
   * webview, which lies over the cells. */
  async typeAtEndOfCellWith(line, column, text) {
    const row = await waitUntil(`the problem at line ${line}, column ${column} in the Problems panel`, async () => {
      const handle = await this.page.evaluateHandle((want) => [...document.querySelectorAll(".markers-panel .monaco-list-row")]
        .find((r) => (r.getAttribute("aria-label") ?? "").includes(want)) ?? null, ` at line ${line} and character ${column}.`);
      return (await handle.evaluate((r) => r !== null)) ? handle : { ok: false, seen: await this.problems() };
    }, 10_000);
    await row.click();
    await this.page.keyboard.press("Enter");
    await waitUntil("a notebook cell's editor focused", () => this.page.evaluate(() =>
      document.activeElement?.closest(".notebook-editor .cell-editor-container") != null), 10_000);
    const before = await this.notebookCells();
    await this.chord("Control+End");
    await this.page.keyboard.type(text);
    await waitUntil(`${JSON.stringify(text)} at the end of a code cell`, async () => {
      const cells = await this.notebookCells();
      return cells?.some((c, i) => c.endsWith(text) && c === before[i] + text) ? true : { ok: false, seen: cells };
    }, 10_000);
  }

  /** Opens the Problems panel (focused) if it is not, and filters it to `filter`. */
  async showProblems(filter) {
    await this.command("Problems: Focus on Problems View");
    await waitUntil("the Problems panel", () => this.page.evaluate(() => {
      const panel = document.querySelector(".markers-panel");
      return panel !== null && panel.offsetParent !== null;
    }), 10_000);
    // The filter box of the Problems view, set through the DOM (an input event, as typing
    // fires): keys typed while VS Code moves the focus (it does while a file opens) could
    // land in the editor.
    const box = await this.page.waitForSelector('.part.panel input[placeholder^="Filter (e.g."]', { visible: true, timeout: 10_000 });
    await box.evaluate((b, f) => {
      b.value = f;
      b.dispatchEvent(new Event("input", { bubbles: true }));
    }, filter ?? "");
    await waitUntil(`the Problems filter to be ${JSON.stringify(filter)}`, () => box.evaluate((b, f) => b.value === f, filter ?? ""), 10_000);
    // Back to the editor, as a user would.
    await this.command("View: Focus Active Editor Group");
  }

  /** The markers tree of the Problems panel: one entry per problem row, with the file
   * (relative to the workspace folder; in a multi-root workspace, after its name) from the
   * group row above it. The row's aria-label carries the severity, message,
   * line and column; the code is the row's code link. */
  async problems() {
    return this.page.evaluate(() => {
      const panel = document.querySelector(".markers-panel");
      if (!panel || panel.offsetParent === null) {
        return null;
      }
      const rows = [...panel.querySelectorAll(".monaco-list-row")]
        .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
      const out = [];
      let file = null;
      for (const row of rows) {
        const label = row.getAttribute("aria-label") ?? "";
        let m = /^\d+ problems? in file (.+) of folder (.+)$/.exec(label);
        if (m) {
          // The folder as the row shows it (its description), which in a multi-root
          // workspace starts with the workspace folder's name ("default • k8s"); the
          // aria-label's folder is "." for a file at the top of any workspace folder.
          const dir = row.querySelector(".label-description")?.innerText.trim() ?? "";
          file = dir ? `${dir.replace(/ • /g, "/")}/${m[1]}` : m[1];
          continue;
        }
        m = /^(Error|Warning|Info): ([\s\S]*) at line (\d+) and character (\d+)\.([\s\S]*)$/.exec(label);
        if (m) {
          out.push({
            file,
            severity: m[1],
            message: m[2],
            line: Number(m[3]),
            column: Number(m[4]),
            source: /generated by (\S+)$/.exec(m[5])?.[1] ?? null,
            code: row.querySelector(".marker-code")?.innerText.trim() ?? null,
          });
        }
      }
      return out;
    });
  }

  /** The servelint problems of one file as "CODE line:column" strings, sorted. */
  async findings(rel) {
    const all = await this.problems();
    if (all === null) {
      return null;
    }
    return all.filter((p) => p.file === rel && p.source === "servelint")
      .map((p) => `${p.code} ${p.line}:${p.column}`).sort();
  }

  /** Waits until the Problems panel shows exactly `expected` servelint findings for rel. */
  async expectFindings(rel, expected, timeout = SHOW_TIMEOUT) {
    const want = [...expected].sort();
    const seen = await waitUntil(`the servelint findings of ${rel} in the Problems panel to be ${JSON.stringify(want)}`,
      async () => {
        const got = await this.findings(rel);
        return got !== null && JSON.stringify(got) === JSON.stringify(want) ? got : { ok: false, seen: await this.problems() };
      }, timeout);
    assert.deepEqual(seen, want);
  }

  /** Ctrl+K Ctrl+I (Show or Focus Hover) and the hover's text once it contains `until`.
   * The hover stays open, so that the check's screenshot shows it. */
  async hover(until) {
    await this.page.keyboard.press("Escape"); // a hover still open from before
    await this.chord("Control+KeyK");
    await this.chord("Control+KeyI");
    return waitUntil(`a hover containing ${JSON.stringify(until)}`, () => this.page.evaluate((u) => {
      const texts = [...document.querySelectorAll(".monaco-hover")]
        .filter((h) => h.offsetParent !== null && !h.classList.contains("hidden"))
        .map((h) => h.innerText);
      const hit = texts.find((t) => t.includes(u));
      return hit ?? { ok: false, seen: texts };
    }, until), 20_000);
  }

  async notifications() {
    return this.page.evaluate(() => [...document.querySelectorAll(".notifications-toasts .notification-toast, .notifications-center .notification-list-item")]
      .map((n) => ({
        message: n.querySelector(".notification-list-item-message")?.innerText.trim() ?? "",
        buttons: [...n.querySelectorAll(".monaco-button")].map((b) => b.innerText.trim()).filter(Boolean),
      })));
  }

  async outputText() {
    return this.linesOf([".part.panel .output-view .monaco-editor .view-lines",
      ".part.panel .monaco-editor .view-lines"]);
  }
}

/** One session per describe block: its first test starts it (so that a session that
 * cannot start is a failed test, and the checks after it fail too, saying so), and it is
 * always stopped after the block. */
function session(name, options) {
  const s = new Session(name, options);
  test(`code-server starts with the packaged .vsix installed (${name})`, { timeout: TEST_TIMEOUT }, async () => {
    try {
      await s.start();
    } catch (err) {
      if (s.page) {
        await s.page.screenshot({ path: path.join(OUT, `${s.name}-start-FAILED.png`) }).catch(() => undefined);
      }
      await s.stop();
      s.page = undefined;
      throw err;
    }
  });
  after(() => s.stop(), { timeout: 60_000 });
  return s;
}

fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(OUT, { recursive: true });

const FIX_ALL_ON_SAVE = {
  "editor.codeActionsOnSave": { "source.fixAll.servelint": "explicit" },
  // The notebook-wide kind: VS Code asks it of the notebook's first cell only.
  "notebook.codeActionsOnSave": { "notebook.source.fixAll": "explicit" },
};

/** The .ipynb `original` with the `source` of each code cell replaced by `sources` (in
 * order), as nbformat writes a source: lines, each but the last with its newline. */
function withCellSources(original, sources) {
  const nb = structuredClone(original);
  const code = nb.cells.filter((c) => c.cell_type === "code");
  assert.equal(code.length, sources.length);
  code.forEach((cell, i) => {
    cell.source = sources[i].split(/(?<=\n)/);
  });
  return nb;
}

/** The two code cells of fixall.ipynb (and of multi-root's cells.ipynb):
 * `!python -m sglang.launch_server --model-path m --tp_size 2` (47 characters before
 * --tp_size) and a %%bash cell whose line 2 `python -m ... --model-path m --tp_size 4` has
 * 46. An edit (a comment line at the end of the %%bash cell, reached through its
 * problem) makes Ctrl+S save; the saved notebook must have both cells fixed and nothing
 * else changed. `filter`: what the Problems panel is filtered by. */
async function fixTwoCellsOnSave(s, rel, filter) {
  const original = JSON.parse(fs.readFileSync(s.file(rel), "utf8"));
  await s.openNotebook(rel);
  await s.showProblems(filter);
  await s.expectFindings(rel, ["SL002 1:48", "SL002 2:47"]);
  await s.typeAtEndOfCellWith(2, 47, "\n# saved by the e2e test");
  await s.chord("Control+KeyS");
  const expected = withCellSources(original, [
    "!python -m sglang.launch_server --model-path m --tp-size 2",
    "%%bash\npython -m sglang.launch_server --model-path m --tp-size 4\n# saved by the e2e test",
  ]);
  await expectNotebookOnDisk(s.file(rel), expected, `${rel} saved with both cells fixed and nothing else changed`);
  await s.expectFindings(rel, []);
}

/** Waits until `file` on disk is valid JSON deep-equal to `expected`. */
async function expectNotebookOnDisk(file, expected, what) {
  await waitUntil(what, () => {
    const text = fs.readFileSync(file, "utf8");
    let saved;
    try {
      saved = JSON.parse(text);
    } catch (err) {
      return { ok: false, seen: `not JSON (${err.message}): ${text}` };
    }
    try {
      assert.deepEqual(saved, expected);
      return true;
    } catch {
      return { ok: false, seen: saved.cells?.map((c) => c.source) ?? saved };
    }
  }, 30_000);
}

// --- a trusted workspace: every format, hover, quick fixes, fix all, settings -------------

describe("VS Code with the servelint .vsix (trusted workspace)", { timeout: 1_200_000 }, () => {
  const s = session("trusted", { workspaceSettings: FIX_ALL_ON_SAVE });

  // Expected findings, written by hand from the fixtures: line and column as the Problems
  // panel shows them (1-based), on the first character of the offending token; in a
  // quoted string (JSON, Python, Dockerfile exec form) that is the opening quote.
  const FORMATS = [
    // line 3 `python3 -m sglang.launch_server --model-path /models/m --tp_size 2 ...`:
    // 55 characters precede --tp_size. Line 6 `  --prefill-only-disable-kv-cache --enable-hisparse`:
    // SL101 is on --enable-hisparse, after 2 + 31 + 1 characters.
    ["shell script", "serve.sh", ["SL002 3:56", "SL101 6:35"]],
    // `            - --tp_size` (line 21) and `            - flash_infer` (line 24): 14 characters of
    // indent and "- " before each token.
    ["Kubernetes YAML", "k8s/deployment.yaml", ["SL002 21:15", "SL007 24:15"]],
    // line 6 `    command: --model-path /models/m --tp_size 2 --port 30000`: 4 + 9 + 1 + 22 = 36.
    ["docker compose", "docker-compose.yaml", ["SL002 6:37"]],
    // line 10 `            "args": ["--model-path", "/models/m", "--tp_size", "2"]`: 12 + 9 + 16 + 13 = 50.
    ["launch.json", ".vscode/launch.json", ["SL002 10:51"]],
    // line 4 `CMD ["--model-path", "/models/m", "--tp_size", "2"]`: 5 + 16 + 13 = 34.
    ["Dockerfile", "Dockerfile", ["SL002 4:35"]],
    // line 10 `        "--tp_size", "2",`: 8 spaces.
    ["Python launcher", "launch.py", ["SL002 10:9"]],
    // line 6, the fenced bash block: the same launch line as serve.sh without --port.
    ["Markdown", "DEPLOY.md", ["SL002 6:56"]],
    // line 18 `            - {{ .Values.backend }}`: the value comes from chart/values.yaml
    // (flash_infer); the finding sits on the template action, after 14 characters.
    ["Helm chart template", "chart/templates/deployment.yaml", ["SL007 18:15"]],
  ];
  for (const [format, rel, expected] of FORMATS) {
    test(`${format}: ${rel} shows ${expected.join(", ")} in the Problems panel`, { timeout: TEST_TIMEOUT }, () =>
      s.check(`problems-${rel.replace(/[/.]/g, "_")}`, async () => {
        await s.open(rel);
        await s.showProblems(path.basename(rel));
        await s.expectFindings(rel, expected);
      }));
  }

  test("Helm: the SL007 on {{ .Values.backend }} points at its value in chart/values.yaml (related information in the Problems panel)",
    { timeout: TEST_TIMEOUT }, () => s.check("helm-values", async () => {
      const rel = "chart/templates/deployment.yaml";
      await s.open(rel);
      await s.showProblems("deployment.yaml");
      await s.expectFindings(rel, ["SL007 18:15"]);
      const related = await waitUntil("a related-information row naming values.yaml", () => s.page.evaluate(() => {
        const rows = [...document.querySelectorAll(".markers-panel .monaco-list-row")].map((r) => r.innerText.replace(/\s+/g, " "));
        const hit = rows.find((t) => t.includes("values.yaml") && t.includes("flash_infer"));
        return hit ?? { ok: false, seen: rows };
      }), 20_000);
      assert.match(related, /\.Values\.backend is flash_infer/);
    }));

  test("environment-dependent verdict: SL664 (--sidecar without a gRPC port) is an error where the container's env: lacks SGLANG_GRPC_PORT, a warning naming it under envFrom, nothing where env: sets it",
    { timeout: TEST_TIMEOUT }, () => s.check("env-dependent", async () => {
      const rel = "k8s/sidecar.yaml";
      await s.open(rel);
      await s.showProblems("sidecar.yaml");
      // `    command: [python3, -m, sglang.launch_server, --model-path, /models/m, --sidecar, ./agent]`:
      // --sidecar after 74 characters, on lines 10 and 16.
      await s.expectFindings(rel, ["SL664 10:75", "SL664 16:75"]);
      const rows = (await s.problems()).filter((p) => p.file === rel && p.code === "SL664")
        .sort((a, b) => a.line - b.line);
      assert.deepEqual(rows.map((p) => [p.severity, p.line]), [["Error", 10], ["Warning", 16]]);
      assert.match(rows[0].message, /^--sidecar connects to SGLang's native gRPC server/);
      assert.doesNotMatch(rows[0].message, /SGLang refuses this unless/);
      assert.match(rows[1].message, /SGLang refuses this unless SGLANG_GRPC_PORT is set; this file does not say whether SGLANG_GRPC_PORT is set/);
    }));

  test("notebook: the cell `!python -m sglang.launch_server ... --tp_size 2` shows SL002 on --tp_size (cell line 1, column 56)",
    { timeout: TEST_TIMEOUT }, () => s.check("problems-notebook", async () => {
      await s.open("notebook.ipynb");
      await waitUntil("the notebook editor", () => s.page.evaluate(() =>
        [...document.querySelectorAll(".notebook-editor .cell-list-container")].some((e) => e.offsetParent !== null)), 20_000);
      await s.showProblems("notebook.ipynb");
      // The cell is its own document: `!python -m sglang.launch_server --model-path /models/m `
      // is 55 characters.
      await s.expectFindings("notebook.ipynb", ["SL002 1:56"]);
    }));

  test("hover on a flag (--port) shows the flag's help", { timeout: TEST_TIMEOUT }, () =>
    s.check("hover-flag", async () => {
      await s.open("serve.sh");
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      // line 3: `... --tp_size 2 --port 30000`, --port starts at column 68.
      await s.goTo(3, 69);
      const text = await s.hover("The port of the HTTP server.");
      assert.match(text, /--port \(SGLang 0\.5\.23\)/);
      assert.match(text, /Type: int/);
      assert.match(text, /Default: 30000/);
    }));

  test("hover on a finding (--tp_size) shows the SL002 rule", { timeout: TEST_TIMEOUT }, () =>
    s.check("hover-rule", async () => {
      await s.goTo(3, 58);
      const text = await s.hover("SL002 underscore-option");
      // The finding's message once (VS Code's problem part), not again in the rule's part.
      assert.equal(text.split("unrecognized arguments: --tp_size (SGLang spells it --tp-size)").length - 1, 1, text);
      assert.match(text, /argparse matches option strings exactly/);
    }));

  test("hover on the SL101 conflict (--enable-hisparse) shows servelint's message, then the seed rule with SGLang's own message", { timeout: TEST_TIMEOUT }, () =>
    s.check("hover-seed-rule", async () => {
      await s.goTo(6, 40);
      // The server's part of the hover (the rule's record), not only VS Code's problem part.
      const text = await s.hover("Why it fails.");
      // The rule's part starts with its heading (code and slug), not the finding's message again.
      const at = text.indexOf("SL101 prefill-only-disable-kv-cache-is-incompatible");
      const problemPart = text.slice(0, at);
      const rulePart = text.slice(at);
      assert.ok(at > 0, text);
      // VS Code's problem part: servelint's own words, saying what to do.
      assert.match(problemPart, /replaces the KV cache with a pool that stores nothing/);
      assert.match(problemPart, /Remove --enable-hisparse or --prefill-only-disable-kv-cache/);
      assert.ok(!rulePart.split("Rules about this option")[0].includes("replaces the KV cache with a pool that stores nothing"), text);
      // The rule's part: SGLang's own message (for searching its issues), then the record.
      assert.match(rulePart, /SGLang's message: --prefill-only-disable-kv-cache is incompatible with --enable-hisparse: HiSparse/);
      assert.match(text, /HiSparse attention selects its own KV pool family/);
    }));

  test("Ctrl+. offers the preferred fix first and Enter applies it (twice); Ctrl+S saves", { timeout: TEST_TIMEOUT }, () =>
    s.check("quick-fix", async () => {
      const rel = "quickfix.sh";
      const before = fs.readFileSync(s.file(rel), "utf8");
      await s.open(rel);
      await s.showProblems(rel);
      // line 3: --tp_size after 55 characters, flash_infer after 55 + 12 + 20.
      await s.expectFindings(rel, ["SL002 3:56", "SL007 3:88"]);
      const quickFix = async (line, column, preferred, after) => {
        await s.goTo(line, column);
        const actions = await s.codeActions();
        assert.deepEqual(actions[0], { label: preferred, focused: true },
          `the preferred fix first and focused, got ${JSON.stringify(actions)}`);
        await s.page.keyboard.press("Enter");
        await waitUntil(`${JSON.stringify(after)} in the editor`, async () => {
          const text = await s.editorText();
          return text?.includes(after) ? true : { ok: false, seen: text };
        }, 20_000);
      };
      await quickFix(3, 58, "Replace --tp_size with --tp-size (SL002)", "--tp-size 2 --attention-backend flash_infer");
      // The server has linted the edited text (--tp-size has the length of --tp_size).
      await s.expectFindings(rel, ["SL007 3:88"]);
      await quickFix(3, 90, "Use 'flashinfer' (SL007)", "--tp-size 2 --attention-backend flashinfer");
      await s.chord("Control+KeyS");
      const expected = before
        .replace("--tp_size 2", "--tp-size 2")
        .replace("--attention-backend flash_infer", "--attention-backend flashinfer");
      await waitUntil(`${rel} saved with both fixes`, () => {
        const disk = fs.readFileSync(s.file(rel), "utf8");
        return disk === expected ? true : { ok: false, seen: disk };
      }, 20_000);
      await s.expectFindings(rel, []);
    }));

  test("Ctrl+S with source.fixAll.servelint on save writes every safe fix to disk", { timeout: TEST_TIMEOUT }, () =>
    s.check("fix-all-on-save", async () => {
      const rel = "fixall.sh";
      const before = fs.readFileSync(s.file(rel), "utf8");
      await s.open(rel);
      await s.showProblems(rel);
      // line 3: --tp_size after 55 characters; line 4 `  --mem_fraction_static 0.8 --attention-backend flash_infer`.
      await s.expectFindings(rel, ["SL002 3:56", "SL002 4:3", "SL007 4:49"]);
      // An edit on the empty last line, so that Ctrl+S saves (and runs the code actions on save).
      await s.goTo(5, 1);
      await s.page.keyboard.type("# saved by the e2e test");
      await waitUntil("the edit in the editor", async () => {
        const text = await s.editorText();
        return text?.endsWith("flash_infer\n# saved by the e2e test") ? true : { ok: false, seen: text };
      }, 10_000);
      await s.chord("Control+KeyS");
      // The two SL002 fixes are safe; SL007's 'flashinfer' is a guess (not safe): fix all
      // leaves it.
      const expected = before
        .replace("--tp_size 2", "--tp-size 2")
        .replace("--mem_fraction_static 0.8", "--mem-fraction-static 0.8")
        + "# saved by the e2e test";
      await waitUntil(`${rel} saved with the safe fixes`, () => {
        const disk = fs.readFileSync(s.file(rel), "utf8");
        return disk === expected ? true : { ok: false, seen: disk };
      }, 30_000);
      await s.expectFindings(rel, ["SL007 4:49"]);
    }));

  test("notebook.codeActionsOnSave notebook.source.fixAll: an edit and Ctrl+S fix both code cells of fixall.ipynb (first cell: Markdown) on disk",
    { timeout: TEST_TIMEOUT }, () => s.check("notebook-fix-all-on-save", async () => {
      await fixTwoCellsOnSave(s, "fixall.ipynb", "fixall.ipynb");
    }));

  test("the language status item of a shell script shows servelint's and SGLang's versions and the interpreter; its Show Output opens the servelint output",
    { timeout: TEST_TIMEOUT }, () => s.check("language-status", async () => {
      await s.open("serve.sh");
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      // The {} next to the language mode in the status bar; a click shows its hover with
      // one row per language status item: label, detail, command link.
      const item = await s.languageStatus();
      assert.equal(item.label, "servelint 0.1.0 · SGLang 0.5.23");
      // The detail is short (the hover has little room), the command's tooltip has the
      // interpreter's and the libraries' paths.
      const m = /^Python (\d+\.\d+\.\d+) · bundled$/.exec(item.detail);
      assert.ok(m, `detail "Python <version> · bundled", got ${JSON.stringify(item.detail)}`);
      // The tooltip starts with where the release comes from: serve.sh names none.
      const full = /^SGLang 0\.5\.23: no release named in the settings or the files: the newest known · Python (\d+\.\d+\.\d+) (\/\S+) · bundled libraries \((\/\S+)\)$/.exec(item.tooltips[0] ?? "");
      assert.ok(full, `the full interpreter path and library folder in the tooltip, got ${JSON.stringify(item.tooltips)}`);
      const [, tipVersion, interpreter, libs] = full;
      assert.equal(tipVersion, m[1]);
      assert.ok(libs.startsWith(s.extensionsDir + path.sep), `${libs} is in the installed extension`);
      // The interpreter it names exists and has that version.
      const version = await run(interpreter, ["-c", "import platform; print(platform.python_version())"]);
      assert.equal(version.trim(), m[1], `${interpreter}'s version`);
      assert.deepEqual(item.links, [{ text: "Show Output", href: "command:servelint.showLogs" }]);
      // The hover, as shown: its Show Output link lies inside the window (with the whole
      // interpreter path in the detail it did not).
      const box = await s.page.evaluate(() => {
        const a = [...document.querySelectorAll(".hover-language-status")]
          .find((row) => row.offsetParent !== null && row.querySelector(".left")?.textContent.startsWith("servelint"))
          ?.querySelector(".right a.monaco-link");
        const r = a?.getBoundingClientRect();
        return r ? { right: r.right, width: window.innerWidth } : null;
      });
      assert.ok(box && box.right <= box.width, `the Show Output link inside the window: ${JSON.stringify(box)}`);
      await s.page.screenshot({ path: path.join(OUT, `${String(shotCount).padStart(2, "0")}-trusted-language-status-hover.png`) });
      // Its command: the servelint output channel, shown in the Output panel.
      const link = await s.page.evaluateHandle(() => [...document.querySelectorAll(".hover-language-status")]
        .find((row) => row.offsetParent !== null && row.querySelector(".left")?.textContent.startsWith("servelint"))
        ?.querySelector(".right a.monaco-link") ?? null);
      assert.ok(await link.evaluate((a) => a !== null), "servelint's Show Output link in the hover");
      await link.evaluate((a) => a.scrollIntoView({ block: "nearest", inline: "nearest" }));
      await link.click();
      const output = await waitUntil("the servelint output in the Output panel", async () => {
        const shown = await s.page.evaluate(() => {
          const panel = document.querySelector(".part.panel");
          const title = panel?.querySelector(".composite.title")?.innerText ?? "";
          const select = panel?.querySelector("select.monaco-select-box");
          return { title, channel: select ? select.options[select.selectedIndex]?.text : null };
        });
        const text = await s.outputText();
        return shown.channel === "servelint" && /Starting: .* -m servelint lsp/.test(text ?? "")
          ? text : { ok: false, seen: { ...shown, text } };
      }, 20_000);
      assert.match(output, /Starting: .* -m servelint lsp/);
    }));

  test("old-image.sh runs lmsysorg/sglang:v0.4.6.post1: no findings, hover and status name 0.4.6.post1; Ctrl+. on the image tag runs Check upgrade to SGLang 0.5.23, which shows what breaks, until Stop",
    { timeout: TEST_TIMEOUT }, () => s.check("release-upgrade", async () => {
      const rel = "old-image.sh";
      await s.open(rel);
      await s.showProblems(rel);
      // Linted as 0.4.6.post1 (the hover says so once the server has linted the file):
      // --enable-ep-moe is an option there, so nothing is reported.
      // line 5: `  python3 -m sglang.launch_server --model-path /models/m --enable-ep-moe --tp-size 8 --port 30000`
      await s.goTo(5, 87);
      const text = await s.hover("Checked as SGLang 0.4.6.post1");
      assert.match(text, /--port \(SGLang 0\.4\.6\.post1\)/);
      assert.match(text, /image lmsysorg\/sglang:v0\.4\.6\.post1-cu124/);
      await s.expectFindings(rel, []);
      await s.page.keyboard.press("Escape");
      const item = await s.languageStatus();
      assert.equal(item.label, "servelint 0.1.0 · SGLang 0.4.6.post1");
      assert.match(item.tooltips[0] ?? "", /^SGLang 0\.4\.6\.post1: image lmsysorg\/sglang:v0\.4\.6\.post1-cu124/);
      await s.page.keyboard.press("Escape");
      // line 4: `docker run --gpus all lmsysorg/sglang:v0.4.6.post1-cu124 \`: the image at column 23.
      await s.goTo(4, 30);
      await s.runCodeAction("Check upgrade to SGLang 0.5.23");
      // What breaks on 0.5.23, on the flag it concerns (column 58), with a notification.
      const seen = await waitUntil("an upgrade problem on --enable-ep-moe", async () => {
        const all = (await s.problems()) ?? [];
        const mine = all.filter((p) => p.file === rel && p.source === "servelint");
        return mine.length === 1 && mine[0].line === 5 && mine[0].column === 58 ? mine : { ok: false, seen: mine };
      }, SHOW_TIMEOUT);
      assert.match(seen[0].message, /^upgrading this launch from SGLang 0\.4\.6\.post1 to 0\.5\.23: /);
      assert.match(seen[0].message, /--ep-size 8/);
      const note = await waitUntil("the upgrade notification", async () => {
        const all = await s.notifications();
        return all.find((n) => n.message.startsWith("Upgrading from SGLang 0.4.6.post1 to 0.5.23")) ?? { ok: false, seen: all };
      }, 20_000);
      assert.match(note.message, /1 problem\(s\) in this file/);
      await s.page.screenshot({ path: path.join(OUT, `${String(shotCount).padStart(2, "0")}-trusted-upgrade-check.png`) });
      // The same menu stops the check, and the file is judged by its own release again.
      await s.runCodeAction("Stop checking the upgrade to SGLang 0.5.23");
      await s.expectFindings(rel, []);
    }));

  test("the code link of SL002 in the Problems panel is the bundled rule page SL002.md, and clicking it opens the page",
    { timeout: TEST_TIMEOUT }, () => s.check("rule-link", async () => {
      await s.open("serve.sh");
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      const linkOf = (code) => s.page.evaluateHandle((c) => [...document.querySelectorAll(".markers-panel .monaco-list-row")]
        .map((row) => row.querySelector("a.monaco-link"))
        .find((a) => a && a.querySelector(".marker-code")?.innerText.trim() === c) ?? null, code);
      const href = await waitUntil("the code link of SL002 in the Problems panel", async () => {
        const a = await linkOf("SL002");
        const h = await a.evaluate((el) => el?.getAttribute("href") ?? null);
        return h ?? { ok: false, seen: await s.problems() };
      }, 10_000);
      // The server sends a file:// URI; VS Code in the browser shows a file of the remote
      // (code-server's) machine as vscode-remote://<code-server's address>/<path>.
      const url = new URL(href);
      assert.ok(url.protocol === "file:" || (url.protocol === "vscode-remote:" && url.host === `127.0.0.1:${s.port}`),
        `a file:// URI (or vscode-remote://127.0.0.1:${s.port}/...), got ${href}`);
      const page = decodeURIComponent(url.pathname);
      assert.ok(page.startsWith(s.extensionsDir + path.sep), `${page} is in the installed extension (${s.extensionsDir})`);
      assert.match(page, /\/bundled\/libs\/servelint\/rules\/pages\/SL002\.md$/);
      assert.ok(fs.existsSync(page), `${page} exists`);
      assert.match(fs.readFileSync(page, "utf8"), /^# SL002 /m);
      await (await linkOf("SL002")).click();
      await waitUntil("SL002.md in the active editor tab", () => s.page.evaluate(() => {
        const tab = document.querySelector(".tabs-container .tab.active");
        return (tab?.getAttribute("aria-label") ?? "").startsWith("SL002.md") ? true : { ok: false, seen: tab?.getAttribute("aria-label") };
      }), 20_000);
      await waitUntil("the rule page's heading in the editor", async () => {
        const text = await s.editorText();
        return text?.includes("# SL002 underscore-option") ? true : { ok: false, seen: text };
      }, 10_000);
      // Its examples are wrong on purpose: the page itself gets no finding (the server
      // has linted it by the time the other file's finding below is back).
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      await s.showProblems("SL002.md");
      await s.expectFindings("SL002.md", []);
    }));

  test("servelint.ignore in .vscode/settings.json takes effect without a restart, and removing it brings the finding back",
    { timeout: TEST_TIMEOUT }, () => s.check("settings-ignore", async () => {
      await s.open("serve.sh");
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      s.writeWorkspaceSettings({ ...FIX_ALL_ON_SAVE, "servelint.ignore": ["SL002"] });
      await s.expectFindings("serve.sh", ["SL101 6:35"], 30_000);
      await s.page.screenshot({ path: path.join(OUT, `${String(shotCount).padStart(2, "0")}-trusted-settings-ignore-set.png`) });
      s.writeWorkspaceSettings(FIX_ALL_ON_SAVE);
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"], 30_000);
    }));
});

// --- an untrusted workspace: limited mode ------------------------------------------------

describe("VS Code with the servelint .vsix (untrusted workspace)", { timeout: 600_000 }, () => {
  // The workspace asks for an interpreter that does not exist: in limited mode the
  // setting is ignored and python3 from PATH runs the bundled server.
  const s = session("untrusted", {
    userSettings: {
      "security.workspace.trust.enabled": true,
      "security.workspace.trust.startupPrompt": "never",
      "security.workspace.trust.emptyWindow": false,
    },
    workspaceSettings: { "servelint.interpreter": ["/nonexistent/python"] },
  });

  test("the workspace is in Restricted Mode, servelint says limited mode in its output, and findings still appear",
    { timeout: TEST_TIMEOUT }, () => s.check("untrusted-limited-mode", async () => {
      await s.open("serve.sh");
      await waitUntil("Restricted Mode in the status bar", () => s.page.evaluate(() =>
        [...document.querySelectorAll(".statusbar-item")].some((i) => i.innerText.includes("Restricted Mode"))), 20_000);
      await s.showProblems("serve.sh");
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
      await s.command("servelint: Show Output");
      const output = await waitUntil("the limited mode line in the servelint output", async () => {
        const text = await s.outputText();
        return text?.includes("Untrusted workspace (limited mode)") ? text : { ok: false, seen: text };
      }, 20_000);
      assert.match(output, /Untrusted workspace \(limited mode\): bundled servelint with python3 from PATH/);
      assert.match(output, /Starting: python3 -m servelint lsp .*\(servelint: bundled\)/);
      assert.doesNotMatch(output, /nonexistent/);
      const errors = (await s.notifications()).filter((n) => n.message.includes("servelint"));
      assert.deepEqual(errors, [], "no servelint notification in limited mode");
    }));
});

// --- a trusted workspace whose servelint.interpreter does not exist -------------------------

describe("VS Code with the servelint .vsix (missing interpreter)", { timeout: 600_000 }, () => {
  const s = session("no-interpreter", { workspaceSettings: { "servelint.interpreter": ["/nonexistent/python"] } });

  test("servelint.interpreter [\"/nonexistent/python\"] gives the documented error notification, and fixing the setting starts the server",
    { timeout: TEST_TIMEOUT }, () => s.check("missing-interpreter", async () => {
      await s.open("serve.sh");
      const expected = "The Python interpreter in servelint.interpreter cannot run the servelint server " +
        "(/nonexistent/python was not found). Set servelint.interpreter to a Python 3.10+ interpreter, " +
        "for example [\"/usr/bin/python3\"].";
      const note = await waitUntil("the servelint error notification", async () => {
        const all = await s.notifications();
        return all.find((n) => n.message.includes("servelint.interpreter")) ?? { ok: false, seen: all };
      });
      assert.equal(note.message, expected);
      assert.deepEqual(note.buttons, ["Open Setting", "Show Output"]);
      await s.showProblems("serve.sh");
      assert.deepEqual(await s.findings("serve.sh"), [], "no server, no findings");
      await s.page.screenshot({ path: path.join(OUT, `${String(shotCount).padStart(2, "0")}-no-interpreter-notification.png`) });
      // Changing servelint.interpreter restarts the server (docs/vscode.md).
      s.writeWorkspaceSettings({ "servelint.interpreter": ["python3"] });
      await s.expectFindings("serve.sh", ["SL002 3:56", "SL101 6:35"]);
    }));
});

// --- a multi-root workspace: each folder's settings ------------------------------------------

describe("VS Code with the servelint .vsix (multi-root workspace)", { timeout: 600_000 }, () => {
  // fixtures/multi-root/servelint.code-workspace: the folders ignores-sl002 (its
  // .vscode/settings.json has "servelint.ignore": ["SL002"]) and default (no settings),
  // each with the same serve.sh; the workspace file sets notebook.codeActionsOnSave to the
  // per-cell source.fixAll.servelint.
  const s = session("multi-root", { fixtures: MULTI_ROOT, workspaceFile: "servelint.code-workspace", ready: "ignores-sl002" });

  test("a folder's servelint.ignore applies to its files only: SL002 shows in default/serve.sh, not in ignores-sl002/serve.sh",
    { timeout: TEST_TIMEOUT }, () => s.check("multi-root-ignore", async () => {
      await s.open("ignores-sl002/serve.sh");
      await s.open("default/serve.sh");
      await s.showProblems("serve.sh");
      await s.expectFindings("default/serve.sh", ["SL002 3:56", "SL101 6:35"]);
      await s.expectFindings("ignores-sl002/serve.sh", ["SL101 6:35"]);
    }));

  test("notebook.codeActionsOnSave source.fixAll.servelint (each cell): an edit and Ctrl+S fix both code cells of default/cells.ipynb on disk",
    { timeout: TEST_TIMEOUT }, () => s.check("notebook-cell-fix-all-on-save", async () => {
      await fixTwoCellsOnSave(s, "default/cells.ipynb", "cells.ipynb");
    }));
});

// A hard stop, whatever hangs: node's runner reports the running test as failed.
setTimeout(() => {
  console.error("vscode.test.mjs: still running after 25 minutes, stopping");
  process.exit(1);
}, 25 * 60_000).unref();
