"""One way from a finding to a diagnostic (servelint/serialize.py), and documentation links
that point at pages that exist."""

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from servelint import serialize
from servelint.checks import load_checks
from servelint.cli import main as cli_main
from servelint.docs import doc_url, page_path, rule_url
from servelint.engine import lint
from servelint.lsp.hover import finding_markdown, rule_hover
from servelint.rules import bundled_packs, rule_set
from servelint.settings import Settings

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2 --enable-lora --enable-hisparse\n"


def local_file(uri: str) -> Path:
    p = urlparse(uri)
    assert p.scheme == "file", uri
    return Path(unquote(p.path))


# --- documentation links -------------------------------------------------------------------


def test_every_bundled_code_links_a_page_that_exists():
    codes = set(load_checks())
    for pack in bundled_packs("0.5.23"):
        codes.update(r.code for r in pack.rules)
    rules = rule_set("0.5.23")
    assert len(codes) > 300
    for code in sorted(codes):
        url = doc_url(code, rules)
        assert url is not None, code
        page = local_file(url)
        assert page.is_file(), (code, url)
        assert page == page_path(code)
        assert page.read_text(encoding="utf-8").splitlines()[2].startswith(f"# {code} "), code
    for rule in rules.rules:
        assert rule_url(rule) == doc_url(rule.code)


def test_pages_are_package_data():
    """The pages live inside the package, and pyproject.toml ships them in the wheel."""
    import servelint
    pages = Path(servelint.__file__).parent / "rules" / "pages"
    assert page_path("SL001").parent == pages and len(list(pages.glob("*.md"))) > 300
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert '"rules/pages/*.md"' in pyproject


PACK = """\
- id: acme-docs
  code: ACME-1
  errorMessage: our clusters do not run LoRA with HiSparse
  docsUrl: https://wiki.example.com/servelint/ACME-1
  githubUrl: https://example.com/source
  condition: {all: [{present: --enable-lora}, {present: --enable-hisparse}]}
- id: acme-source
  code: ACME-2
  errorMessage: LoRA is not allowed here
  githubUrl: https://example.com/source#L2
  condition: {present: --enable-lora}
- id: acme-nothing
  code: ACME-3
  severity: warning
  errorMessage: no model path in our registry
  condition: {present: --model-path}
"""


@pytest.fixture
def custom(tmp_path):
    pack = tmp_path / "acme.yaml"
    pack.write_text(PACK)
    result = lint(LAUNCH, path=str(tmp_path / "run.sh"), settings=Settings(rule_packs=[str(pack)]))
    diags = {d["code"]: d for d in serialize.result_diagnostics(result, "file:///x/run.sh", 3)}
    return result, diags


def test_a_rule_from_a_users_pack_links_its_own_url(custom):
    result, diags = custom
    assert {"ACME-1", "ACME-2", "ACME-3", "SL002"} <= set(diags)
    assert diags["ACME-1"]["codeDescription"] == {"href": "https://wiki.example.com/servelint/ACME-1"}
    assert diags["ACME-2"]["codeDescription"] == {"href": "https://example.com/source#L2"}
    assert "codeDescription" not in diags["ACME-3"]  # no URL: no link, rather than a dead one
    assert local_file(diags["SL002"]["codeDescription"]["href"]).is_file()
    # Hover links the same page.
    rules = result.rules
    assert "(https://wiki.example.com/servelint/ACME-1)" in finding_markdown("ACME-1", "m", rules)
    assert "documentation](" not in rule_hover(rules.by_code("ACME-3"))
    assert f"[Documentation]({doc_url('SL002')})" in finding_markdown("SL002", "m", rules)


def test_docs_url_is_a_record_field(tmp_path):
    import jsonschema
    import yaml
    root = Path(__file__).resolve().parent.parent
    schema = json.loads((root / "schemas" / "rule.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(PACK), schema)
    from servelint.rules import validate_record
    assert validate_record({"id": "x", "errorMessage": "m", "exampleFix": "a", "docsUrl": "u"}) == []


# --- one serializer --------------------------------------------------------------------------


def test_diagnostic_shape(custom):
    result, _ = custom
    f = next(f for f in result.findings if f.code == "SL002")
    (d,) = serialize.finding_diagnostics(f, result.index, "file:///x/run.sh", 3, result.rules)
    assert list(d) == ["range", "message", "severity", "code", "codeDescription", "source", "data"]
    assert d["severity"] == 1 and d["source"] == "servelint"
    assert d["data"]["version"] == 3
    assert d["data"]["fixes"][0] == {"title": "Replace --tp_size with --tp-size", "preferred": True,
                                     "safe": True, "edits": [{"range": d["range"], "newText": "--tp-size"}]}


def test_lsprotocol_reads_the_dicts_back_unchanged(tmp_path):
    """convert.to_diagnostics is the serializer's dicts as lsprotocol objects; unstructured
    again they are the same JSON (so nothing the serializer sends is lost or renamed)."""
    from lsprotocol.converters import get_converter

    from servelint.lsp.convert import to_diagnostics
    (tmp_path / "server.yaml").write_text(
        "model-path: BAAI/bge-large-en-v1.5\nis-embedding: true\nchunked-prefill-size: -1\n"
        "disable-radix-cache: true\nprefill-only-disable-kv-cache: true\ntp-size: 2\n")
    texts = {"run.sh": "python3 -m sglang.launch_server --config server.yaml \\\n  --enable-hisparse\n",
             "b.sh": LAUNCH + "python3 -m sglang.launch_server --model-path m --disable-cuda-graph\n"}
    converter = get_converter()
    seen = set()
    for name, text in texts.items():
        result = lint(text, path=str(tmp_path / name))
        for f in result.findings:
            dicts = serialize.finding_diagnostics(f, result.index, "file:///x", None, result.rules)
            objs = to_diagnostics(f, result.index, "file:///x", None, result.rules)
            assert [converter.unstructure(o) for o in objs] == json.loads(json.dumps(dicts))
            seen.update(k for d in dicts for k in d)
    assert {"relatedInformation", "tags"} <= seen


def test_the_cli_json_is_the_lsp_diagnostic(tmp_path, capsys, monkeypatch):
    """`check --format json` prints serialize.check_record of serialize.diagnostic: the same
    function the editor's diagnostics come from."""
    (tmp_path / "server.yaml").write_text("tp-size: 2\nattention-backend: flash_infer\n")
    script = tmp_path / "run.sh"
    script.write_text("python3 -m sglang.launch_server --config server.yaml --enable-hisparse \\\n"
                      "  --tp_size 2 --disable-cuda-graph\n")
    calls = []
    real = serialize.diagnostic

    def spy(*args, **kw):
        calls.append(args[0].code)
        return real(*args, **kw)

    monkeypatch.setattr(serialize, "diagnostic", spy)
    cli_main(["check", "--format", "json-lines", str(script)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert calls and [o["code"] for o in out] == calls
    monkeypatch.undo()
    result = lint(script.read_text(), path=str(script))
    editor = serialize.result_diagnostics(result, script.as_uri(), None)
    mains = [serialize.diagnostic(f, result.index, script.as_uri(), None, result.rules,
                                  serialize.release_of(result, f))
             for f in result.findings]
    assert all(m["data"]["release"]["version"] for m in mains)
    assert all(m in editor for m in mains)
    from servelint.report import record
    assert out == [record(str(script), m) for m in mains]


def test_pygls_sends_the_dicts_as_they_are():
    """The pygls server publishes the serializer's dicts unchanged (convert.send_diagnostics;
    pygls 2.1.1's protocol.notify cannot take a dict for a typed method)."""
    from pygls.lsp.server import LanguageServer

    from servelint.lsp.convert import send_diagnostics

    class Sink:
        def __init__(self):
            self.data = b""

        def write(self, data):
            self.data += data

        def close(self):
            pass

    ls = LanguageServer("t", "0")
    sink = Sink()
    ls.protocol.set_writer(sink)
    result = lint(LAUNCH, path="run.sh")
    diags = serialize.result_diagnostics(result, "file:///x/run.sh", 7)
    send_diagnostics(ls, "file:///x/run.sh", 7, diags)
    head, _, body = sink.data.partition(b"\r\n\r\n")
    assert int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) == len(body)
    assert json.loads(body) == {"method": "textDocument/publishDiagnostics", "jsonrpc": "2.0",
                                "params": {"uri": "file:///x/run.sh", "diagnostics": diags, "version": 7}}
    sink.data = b""
    send_diagnostics(ls, "file:///x/run.sh", None, [])
    assert json.loads(sink.data.partition(b"\r\n\r\n")[2])["params"] == {
        "uri": "file:///x/run.sh", "diagnostics": []}
