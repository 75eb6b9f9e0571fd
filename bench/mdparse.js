// The bench's answer to vscode-markdown-language-server's `markdown/parse` request: VS Code's
// Markdown extension answers it with markdown-it's tokens of the document; this does the same
// for a plain LSP client. One JSON line {"text": ...} in, one JSON line of tokens out.
// Usage: node bench/mdparse.js <path to the markdown-it package>
"use strict";
const MarkdownIt = require(process.argv[2]);
const md = MarkdownIt({ html: true });
const lines = require("readline").createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const { text } = JSON.parse(line);
  process.stdout.write(JSON.stringify(md.parse(text, {})) + "\n");
});
