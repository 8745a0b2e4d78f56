"""Precision cases for the I/O and logging rules (BS4xx), each checked against TorchDynamo 2.13
when written: flagged lines break, the others do not."""

import textwrap

import pytest

from tests.helpers import lint_source

HEADER = "import logging\nimport sys\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n@torch.compile\ndef fn(x, mask=None):\n"


def findings(tmp_path, body: str, header: str = HEADER, indent: str = "    ") -> set[tuple[int, str]]:
    source = header + textwrap.indent(textwrap.dedent(body).strip("\n"), indent) + "\n"
    outcome = lint_source(tmp_path, source)
    assert not outcome.errors
    offset = header.count("\n")
    return {(f.line - offset, f.rule) for f in outcome.findings if f.rule.startswith("BS4")}


@pytest.mark.parametrize("body,expected", [
    ("s = '%s' % (x,)\nreturn x", {(1, "BS407")}),
    ("s = f'{x!r}'\nreturn x", {(1, "BS407")}),
    ("s = x.__repr__()\nreturn x", {(1, "BS407")}),
    ("s = str([x, x])\nreturn x", {(1, "BS407")}),
    # formatting without a conversion (the string is only passed on), optional tensors: traced
    ("a = f'{x}'\nb = '{}'.format(x)\nc = f'{x:.2f}' if x.dim() == 0 else str(mask)\nreturn x, a, b, c", set()),
    ("s = f'{x.shape!r}' + str(x.dtype) + repr(x.device) + '%d' % x.shape[0]\nreturn x, s", set()),
    # exception and assert messages are formatted only on failure
    ("if x.dim() != 1:\n    raise ValueError('bad ' + str(x))\nassert x.shape[0] > 0, repr(x)\nreturn x", set()),
])
def test_tensor_to_string(tmp_path, body, expected):
    assert findings(tmp_path, body) == expected


@pytest.mark.parametrize("body,expected", [
    ("logger.info('a')\nreturn x", {(1, "BS403")}),
    ("if logger.isEnabledFor(logging.DEBUG):\n    x = x + 1\nreturn x", {(1, "BS403")}),
    ("logging.getLogger(__name__).warning('a')\nreturn x", {(1, "BS402"), (1, "BS403")}),
    ("root = logging.getLogger()\nreturn x * logging.INFO", set()),
    ("logging.exception('a')\nlogging.warn('b')\nreturn x", {(1, "BS402"), (2, "BS402")}),
    ("print('a', file=sys.stderr)\nsys.stderr.write('b')\nreturn x", {(1, "BS401"), (2, "BS405")}),
])
def test_logging_and_stdio(tmp_path, body, expected):
    assert findings(tmp_path, body) == expected


def test_logging_module_alias_is_a_logging_call_not_a_logger(tmp_path):
    header = "import logging as log\nimport torch\n\n@torch.compile\ndef fn(x):\n"
    assert findings(tmp_path, "log.info('a')\nreturn x", header) == {(1, "BS402")}


@pytest.mark.parametrize("header,expected", [
    # loguru's logger breaks on its own (BS408, not a logging.Logger); a custom `log` object in a
    # module without logging does not
    ("from loguru import logger\nimport torch\n\n@torch.compile\ndef fn(x):\n", {(1, "BS408")}),
    ("import torch\n\nclass Log:\n    def info(self, m):\n        pass\n\nlogger = Log()\n\n@torch.compile\ndef fn(x):\n",
     set()),
])
def test_non_stdlib_loggers_are_not_logging_loggers(tmp_path, header, expected):
    assert findings(tmp_path, "logger.info('a')\nreturn x", header) == expected


def test_debug_flag_branches_are_left_alone(tmp_path):
    header = ("import logging\nimport warnings\nimport torch\nfrom torch import nn\n\nlog = logging.getLogger('m')\n\n"
              "class M(nn.Module):\n    def forward(self, x):\n")
    body = """
    if self.verbose:
        print(x.shape)
        log.debug('x')
    else:
        print('quiet')
    if self.debug and x.shape[0] > 1:
        warnings.warn('debug')
    return x
    """
    assert findings(tmp_path, body, header, indent=" " * 8) == {(5, "BS401")}


def test_warnings_in_branches_are_warnings_that_say_when_they_break(tmp_path):
    header = HEADER.replace("import sys\n", "import sys\nimport warnings\n")
    body = """
    warnings.warn('FnV1 is deprecated')
    if mask is not None:
        warnings.warn('mask is ignored')
        logger.warning('mask is ignored')
        logging.error('mask is ignored')
    try:
        y = x + 1
    except RuntimeError:
        logger.exception('failed')
        raise
    if torch.compiler.is_compiling():
        logger.warning('compiled')
    return y
    """
    source = header + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    offset = header.count("\n")
    found = {(f.line - offset, f.rule, f.severity) for f in lint_source(tmp_path, source).findings}
    assert found == {(1, "BS404", "error"), (3, "BS404", "warning"), (4, "BS403", "warning"),
                     (5, "BS402", "warning"), (9, "BS403", "warning"),
                     (12, "BS403", "error")}  # a branch always taken under torch.compile is not conditional
    conditional = [f for f in lint_source(tmp_path, source).findings if f.severity == "warning"]
    assert all("whenever that branch runs" in f.message for f in conditional)


def test_a_branch_settled_by_a_constant_test_is_the_only_one_walked(tmp_path):
    body = """
    if False:
        print(x)
    if TYPE_CHECKING:
        logger.info('typing only')
    if not True:
        logger.info('never')
    return x
    """
    header = HEADER.replace("import sys\n", "import sys\nfrom typing import TYPE_CHECKING\n")
    assert findings(tmp_path, body, header) == set()
