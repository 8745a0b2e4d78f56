"""Start-up guards: the lint-only paths never import torch (about 2 s on its own)."""

import asyncio
import json
import os
import shlex
import subprocess
import sys

from tests.helpers import ROOT
from tests.integrations.helpers import BREAKING
from tests.integrations.lsp_client import Session


def imported_modules(importtime_log: str) -> set[str]:
    """Module names from `python -X importtime` output (`import time: self | cumulative | name`)."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime_log.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


def is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def test_static_check_never_imports_torch():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "breakscan", "check", "--static", "--no-cache",
                           "--format", "sarif", "examples/model.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    modules = imported_modules(done.stderr)
    assert done.returncode == 1 and '"ruleId": "BS101"' in done.stdout
    assert {"libcst", "breakscan.lint.engine", "breakscan.rule_docs"} <= modules  # rule_docs: by the sarif renderer
    assert not [m for m in modules if is_torch(m)]


def test_a_run_the_cache_answers_imports_neither_the_analysis_nor_libcst(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(BREAKING)
    command = [sys.executable, "-X", "importtime", "-m", "breakscan", "check", "--static", "--format", "text",
               "--ignore", "BS4", str(model)]
    env = {**os.environ, "BREAKSCAN_CACHE_DIR": str(tmp_path / "cache")}
    cold, warm = (subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
                  for _ in range(2))
    assert cold.returncode == warm.returncode == 1 and cold.stdout == warm.stdout
    assert "libcst" in imported_modules(cold.stderr)
    assert not {"libcst", "breakscan.lint.engine"} & imported_modules(warm.stderr)


def test_language_server_never_imports_torch(tmp_path):
    log = tmp_path / "importtime.log"
    server = f"exec {shlex.quote(sys.executable)} -X importtime -m breakscan lsp 2> {shlex.quote(str(log))}"
    model = tmp_path / "model.py"

    async def scenario():
        async with Session(tmp_path, command=("sh", "-c", server)) as session:
            uri = session.open(model, BREAKING)
            [diagnostic] = await session.diagnostics(uri)
            await session.hover(uri, diagnostic.range.start.line, diagnostic.range.start.character)
            await session.code_actions(uri, diagnostic)

    asyncio.run(scenario())
    modules = imported_modules(log.read_text())
    assert {"pygls", "breakscan.lsp.server", "breakscan.lint.engine"} <= modules
    assert not [m for m in modules if is_torch(m)]


def _count_parses(monkeypatch) -> list[str]:
    """The texts libcst parses from now on."""
    import libcst

    parsed: list[str] = []
    real_parse = libcst.parse_module

    def counting_parse(source, *args, **kwargs):
        parsed.append(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting_parse)
    return parsed


def _check_json(paths: list[str], capsys, *options: str) -> str:
    from breakscan.cli import main

    capsys.readouterr()
    assert main(["check", "--static", "--jobs", "1", "--format", "json", *options, *paths]) == 1
    return capsys.readouterr().out


def test_each_file_is_parsed_once_for_the_lint_and_its_fixes_and_the_cache_holds_the_fixes(tmp_path, monkeypatch,
                                                                                            capsys):
    """One libcst parse per file per run, shared by the lint and the fix suggesters; a warm cache
    answers with the fixes and parses nothing."""
    model = tmp_path / "model.py"
    model.write_text((ROOT / "examples" / "model.py").read_text())
    helper = tmp_path / "helper.py"  # reached from the model: parsed by the model's unit, linted by its own
    helper.write_text("def log_it(x):\n    print(x)\n    return x\n")
    model.write_text(model.read_text() + "\n\nfrom helper import log_it\n\n\nclass Wrapped(torch.nn.Module):\n"
                     "    def forward(self, x):\n        return log_it(x)\n\n\ncompiled = torch.compile(Wrapped())\n")
    parsed = _count_parses(monkeypatch)
    monkeypatch.setenv("BREAKSCAN_CACHE_DIR", str(tmp_path / "cache"))
    paths = [str(model), str(helper)]
    cold = _check_json(paths, capsys)
    findings = json.loads(cold)["findings"]
    assert {f["path"] for f in findings} == set(paths) and any(f["fix"]["edits"] for f in findings)
    assert sorted(parsed) == sorted([model.read_text(), helper.read_text()])
    parsed.clear()
    assert _check_json(paths, capsys) == cold
    assert parsed == []
    added = next(line for f in findings if f["fix"]["diff"] for line in f["fix"]["diff"].splitlines()
                 if line.startswith("+") and not line.startswith("+++"))
    assert added in _check_json(paths, capsys, "--format", "text")  # a fix's diff, from the cache
    assert parsed == []


def test_a_file_naming_compile_only_in_strings_and_comments_is_not_parsed(tmp_path, monkeypatch):
    from breakscan.config import Config
    from breakscan.lint.linter import lint_paths

    documented = tmp_path / "documented.py"
    documented.write_text('"""Works under torch.compile."""\n# compile-time constants below\n'
                          'def forward_all(x):\n    return f"{x} def forward"\n')
    broken = tmp_path / "broken.py"
    broken.write_text('"""See torch.compile."""\ndef f(x) return x\n')
    compiled = tmp_path / "compiled.py"
    compiled.write_text("import torch\n\n\n@torch.compile\ndef fn(x):\n    print(x)\n    return x\n")
    parsed = _count_parses(monkeypatch)
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    assert parsed == [compiled.read_text()]
    assert [(f.path, f.rule) for f in outcome.findings] == [(str(compiled), "BS401")]
    assert [(e.path, e.line) for e in outcome.errors] == [(str(broken), 2)]  # still checked, by `ast`
