"""Start-up guards: the lint-only paths never import torch (about 2 s on its own)."""

import asyncio
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
