// The server as VS Code's language client talks to it: Microsoft's protocol
// implementation (vscode-languageserver-protocol) over stdio with a real server process,
// once with the development environment and once the way the extension starts the bundled
// server (python3 from PATH, bundled/libs first on PYTHONPATH, the extension folder as
// working directory).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  CodeAction, CodeActionRequest, CompletionItem, CompletionList, CompletionRequest,
  CompletionResolveRequest, ConfigurationRequest, createProtocolConnection, Diagnostic,
  DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, ExecuteCommandRequest, ExitNotification, HoverRequest,
  InitializeRequest, InitializedNotification, MarkupContent, ProtocolConnection,
  PublishDiagnosticsNotification, PublishDiagnosticsParams, RegistrationRequest, ShutdownRequest,
  StreamMessageReader, StreamMessageWriter, TextEdit, WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";

import { fromObject, initializationOptions, serverSettings } from "../src/config";
import { findInterpreter, interpreterCandidates } from "../src/interpreter";
import { checkBundle } from "../src/bundle";
import { serverCommand } from "../src/launch";
import { formatLintSummary, LINT_WORKSPACE_COMMAND } from "../src/summary";
import { buildBundle, ROOT, testPython } from "./support";

const SCRIPT = "python -m sglang.launch_server --model-path /models/m --tp_size 2\n";
const FLAG = "--tp_size";
const FLAG_START = SCRIPT.indexOf(FLAG); // 54
const GUARD_MS = 60000; // only a guard against hanging forever, not a timing assertion

interface Server {
  proc: ChildProcess;
  conn: ProtocolConnection;
  stderr: string[];
  diagnostics: Map<string, PublishDiagnosticsParams[]>;
  waitForDiagnostics(uri: string, pred: (p: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams>;
}

function startServer(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Server {
  const proc = spawn(command, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
  const stderr: string[] = [];
  proc.stderr!.on("data", (d: Buffer) => stderr.push(d.toString()));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  const waiters: Array<() => void> = [];
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
    diagnostics.set(p.uri, [...(diagnostics.get(p.uri) ?? []), p]);
    waiters.splice(0).forEach((w) => w());
  });
  // What VS Code answers to the server's own requests.
  conn.onRequest(ConfigurationRequest.type, (params) =>
    params.items.map((item) => (item.section === "servelint"
      ? serverSettings(fromObject({}), undefined, true) : null)));
  conn.onRequest(RegistrationRequest.type, () => null);
  conn.onRequest(WorkDoneProgressCreateRequest.type, () => null);
  conn.listen();
  const waitForDiagnostics = (uri: string, pred: (p: PublishDiagnosticsParams) => boolean) =>
    new Promise<PublishDiagnosticsParams>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching diagnostics for ${uri}; stderr: ${stderr.join("")}`)), GUARD_MS);
      const check = () => {
        const hit = (diagnostics.get(uri) ?? []).find(pred);
        if (hit) {
          clearTimeout(timer);
          resolve(hit);
        } else {
          waiters.push(check);
        }
      };
      check();
    });
  return { proc, conn, stderr, diagnostics, waitForDiagnostics };
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split("\n");
  const offset = (line: number, character: number) =>
    lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0) + character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start.line, b.range.start.character) - offset(a.range.start.line, a.range.start.character));
  let out = text;
  for (const e of sorted) {
    out = out.slice(0, offset(e.range.start.line, e.range.start.character)) + e.newText + out.slice(offset(e.range.end.line, e.range.end.character));
  }
  return out;
}

async function exercise(server: Server, workspace: string): Promise<void> {
  const { conn } = server;
  const file = path.join(workspace, "serve.sh");
  fs.writeFileSync(file, SCRIPT);
  const uri = pathToFileURL(file).href;
  const folderUri = pathToFileURL(workspace).href;

  const init = await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: folderUri,
    workspaceFolders: [{ uri: folderUri, name: "ws" }],
    capabilities: {
      workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true }, workspaceFolders: true },
      textDocument: {
        publishDiagnostics: { versionSupport: true },
        hover: { contentFormat: ["markdown", "plaintext"] },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["quickfix", "source.fixAll"] } } },
        completion: {
          completionItem: { documentationFormat: ["markdown"], resolveSupport: { properties: ["documentation"] } },
          completionList: { itemDefaults: ["editRange"] },
        },
      },
    },
    initializationOptions: initializationOptions(serverSettings(fromObject({}), workspace, true), true),
  });
  assert.equal(init.serverInfo?.name, "servelint");
  assert.ok(init.capabilities.hoverProvider, "hover offered");
  assert.ok(init.capabilities.codeActionProvider, "code actions offered");
  await conn.sendNotification(InitializedNotification.type, {});

  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "shellscript", version: 1, text: SCRIPT },
  });
  const published = await server.waitForDiagnostics(uri, (p) => p.diagnostics.some((d) => d.code === "SL002"));
  const diag = published.diagnostics.find((d) => d.code === "SL002") as Diagnostic;
  assert.equal(diag.source, "servelint");
  assert.deepEqual(diag.range, { start: { line: 0, character: 54 }, end: { line: 0, character: 63 } });
  assert.equal(FLAG_START, 54);
  assert.equal(SCRIPT.slice(diag.range.start.character, diag.range.end.character), FLAG);

  const actions = await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: diag.range,
    context: { diagnostics: [diag], only: ["quickfix"] },
  });
  const fix = (actions ?? []).find((a): a is CodeAction => "kind" in a && a.kind === "quickfix"
    && (a.diagnostics ?? []).some((d) => d.code === "SL002"));
  assert.ok(fix, `a quick fix for SL002 in ${JSON.stringify(actions)}`);
  const edits = fix.edit?.changes?.[uri] ?? [];
  assert.ok(edits.length > 0, "the quick fix edits the document");
  assert.equal(applyEdits(SCRIPT, edits), SCRIPT.replace("--tp_size", "--tp-size"));

  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri }, position: { line: 0, character: FLAG_START + 3 },
  });
  assert.ok(hover, "hover on --tp_size");
  const contents = hover.contents as MarkupContent;
  assert.equal(contents.kind, "markdown");
  assert.match(contents.value, /tp-size/);

  // Silencing the finding: the code action writes the comment above the launch.
  const all = await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] },
  });
  const disable = (all ?? []).find((a): a is CodeAction => "kind" in a && a.title === "Disable SL002 for this launch");
  assert.ok(disable, `a "Disable SL002 for this launch" action in ${JSON.stringify(all)}`);
  assert.notEqual(disable.isPreferred, true);
  const silenced = applyEdits(SCRIPT, disable.edit?.changes?.[uri] ?? [])
    .replace("TODO: reason", "the old image reads --tp_size");
  assert.equal(silenced, "# servelint: disable=SL002 -- the old image reads --tp_size\n" + SCRIPT);
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 }, contentChanges: [{ text: silenced }],
  });
  const quiet = await server.waitForDiagnostics(uri, (p) => p.version === 2);
  assert.deepEqual(quiet.diagnostics.map((d) => d.code), []);

  // Completion while typing an option, with the documentation resolved on demand.
  const typing = silenced.replace(/\n$/, " --enable-hier\n");
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 3 }, contentChanges: [{ text: typing }],
  });
  const line = typing.split("\n")[1];
  const answer = await conn.sendRequest(CompletionRequest.type, {
    textDocument: { uri }, position: { line: 1, character: line.length },
  });
  assert.ok(answer && !Array.isArray(answer), "a completion list");
  const list = answer as CompletionList;
  const labels = list.items.map((i) => i.label);
  assert.ok(labels.includes("--enable-hierarchical-cache"), `completion offers --enable-hierarchical-cache`);
  assert.ok(!labels.includes("--model-path"), "an option already written is not offered again");
  assert.deepEqual(list.itemDefaults?.editRange, {
    start: { line: 1, character: line.length - "--enable-hier".length }, end: { line: 1, character: line.length },
  });
  const item = list.items.find((i) => i.label === "--enable-hierarchical-cache") as CompletionItem;
  assert.equal(item.documentation, undefined, "documentation comes with completionItem/resolve");
  const resolved = await conn.sendRequest(CompletionResolveRequest.type, item);
  assert.match((resolved.documentation as MarkupContent).value, /hierarchical/i);

  // Lint Workspace: a file nobody opened gets its diagnostics.
  const commands = init.capabilities.executeCommandProvider?.commands ?? [];
  assert.ok(commands.includes(LINT_WORKSPACE_COMMAND), `${LINT_WORKSPACE_COMMAND} in ${JSON.stringify(commands)}`);
  const other = path.join(workspace, "other.sh");
  fs.writeFileSync(other, SCRIPT);
  const result: unknown = await conn.sendRequest(ExecuteCommandRequest.type, { command: LINT_WORKSPACE_COMMAND });
  assert.ok(typeof result === "object" && result !== null, `lintWorkspace returned ${JSON.stringify(result)}`);
  assert.match(formatLintSummary(result), /2 files/);
  await server.waitForDiagnostics(pathToFileURL(other).href, (p) => p.diagnostics.some((d) => d.code === "SL002"));

  await conn.sendRequest(ShutdownRequest.type);
  const exited = new Promise<number | null>((resolve) => server.proc.on("exit", (code) => resolve(code)));
  await conn.sendNotification(ExitNotification.type);
  const code = await exited;
  conn.dispose();
  assert.equal(code, 0, `server exit code; stderr: ${server.stderr.join("")}`);
}

function tempWorkspace(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "servelint-ws-"));
}

test("the development server: diagnostics, quick fix, hover, suppression, completion, lint workspace, clean exit", { timeout: 120000 }, async () => {
  const workspace = tempWorkspace();
  try {
    const server = startServer(testPython(), ["-m", "servelint", "lsp"], { ...process.env }, workspace);
    await exercise(server, workspace);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test("the bundled server, started as the extension starts it in limited mode", { timeout: 120000 }, async () => {
  const libs = path.join(ROOT, "bundled", "libs");
  assert.ok(fs.existsSync(path.join(libs, "servelint", "cli.py")),
    `${libs} has no servelint: run \`npm run bundle-server\` first`);
  const baseEnv = { ...process.env };
  delete baseEnv.PYTHONPATH;
  delete baseEnv.VIRTUAL_ENV;
  // Untrusted: python3 from PATH, bundled libraries.
  const { found, failures } = await findInterpreter(
    interpreterCandidates({ trusted: false, setting: [], platform: process.platform }), ROOT);
  assert.ok(found, `no python3 on PATH: ${failures.join("; ")}`);
  const plan = serverCommand({
    interpreter: found.candidate.argv, strategy: "useBundled", environmentHasServelint: found.probe.hasServelint,
    bundledLibs: libs, extensionRoot: ROOT, baseEnv, platform: process.platform,
  });
  assert.equal(plan.uses, "bundled");
  // The extension's bundle check finds nothing wrong with this machine's bundle.
  assert.deepEqual(await checkBundle(plan, found.candidate.argv, libs), []);
  // That interpreter really imports the bundled copy of servelint and its dependencies.
  const where = spawnSync(plan.command, ["-c",
    "import servelint, pygls, lsprotocol, yaml, tree_sitter, tree_sitter_bash; print(servelint.__file__); print(pygls.__file__); print(tree_sitter.__file__)"],
  { env: plan.env, cwd: plan.cwd, encoding: "utf8" });
  assert.equal(where.status, 0, where.stderr);
  for (const line of where.stdout.trim().split("\n")) {
    assert.ok(line.startsWith(libs + path.sep), `${line} is not from ${libs}`);
  }
  const workspace = tempWorkspace();
  try {
    const server = startServer(plan.command, plan.args, plan.env, plan.cwd);
    await exercise(server, workspace);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test("the universal package's bundle: bundled servelint with the development environment's PyYAML and tree-sitter", { timeout: 180000 }, async () => {
  // A shell script is parsed with tree-sitter: the diagnostic on serve.sh shows that the
  // environment's compiled modules serve the bundled pure-Python server.
  const root = buildBundle("universal");
  const workspace = tempWorkspace();
  try {
    const libs = path.join(root, "bundled", "libs");
    const baseEnv = { ...process.env };
    delete baseEnv.PYTHONPATH;
    const plan = serverCommand({
      interpreter: [testPython()], strategy: "useBundled", environmentHasServelint: true,
      bundledLibs: libs, extensionRoot: root, baseEnv, platform: process.platform,
    });
    const where = spawnSync(plan.command, ["-c", "import servelint, tree_sitter; print(servelint.__file__); print(tree_sitter.__file__)"],
      { env: plan.env, cwd: plan.cwd, encoding: "utf8" });
    assert.equal(where.status, 0, where.stderr);
    const [servelintFile, treeSitterFile] = where.stdout.trim().split("\n");
    assert.ok(servelintFile.startsWith(libs + path.sep), `${servelintFile} is not from ${libs}`);
    assert.ok(!treeSitterFile.startsWith(libs + path.sep), `${treeSitterFile} should come from the environment`);
    const server = startServer(plan.command, plan.args, plan.env, plan.cwd);
    await exercise(server, workspace);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
