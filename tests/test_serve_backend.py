"""`sglang serve --model-type BACKEND`: SGLang's serve command hands the options of a
backend other than the LLM server (diffusion) to that backend's own parser, so servelint,
which knows the LLM server's options only, does not judge them by the LLM server's."""

from servelint.engine import lint, serve_backend

DIFFUSION = "sglang serve --model-type diffusion --model-path black-forest-labs/FLUX.1-dev --num-gpus 1\n"
LLM = "sglang serve --model-type llm --model-path m --num-gpus 1\n"


def test_another_backend_is_not_judged_by_the_llm_servers_options():
    result = lint(DIFFUSION, "serve.sh")
    assert result.findings == []
    assert any("--model-type diffusion" in n and "not checked" in n for n in result.notices)
    # The lists that run parallel to the launches stay parallel (hover, completion).
    assert len(result.launches) == len(result.parsed) == len(result.releases) == 1


def test_the_llm_backend_and_auto_are_judged():
    assert [f.code for f in lint(LLM, "serve.sh").findings] == ["SL001"]
    auto = LLM.replace("--model-type llm ", "")
    assert [f.code for f in lint(auto, "serve.sh").findings] == ["SL001"]


def test_the_backend_of_a_launch():
    (launch,) = lint(DIFFUSION, "serve.sh").launches
    assert serve_backend(launch) == "diffusion"
    (launch,) = lint(LLM.replace("--model-type llm", "--model-type=llm"), "serve.sh").launches
    assert serve_backend(launch) == "llm"
    (launch,) = lint("python3 -m sglang.launch_server --model-path m\n", "run.sh").launches
    assert serve_backend(launch) is None
