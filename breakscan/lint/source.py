"""Reading a file into text the parser can take, with a clear reason when that is impossible."""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass

from breakscan.notebook import NotebookError, is_notebook, notebook_code

# CPython refuses more than 200 nested brackets; libcst's native parser can overflow its stack
# (and segfault) long before it reports that, so we check first.
MAX_BRACKET_DEPTH = 200
MAX_FILE_BYTES = 50 * 1024 * 1024
# libcst's parser is quadratic in the length of one operator chain (`a + a + ...`: 2,000 terms take
# 20 s). Such chains only fit on very long lines, so only files with one are measured, with `ast`.
LONG_LINE = 2000
MAX_CHAIN = 400

_BRACKETS = re.compile(rb"[()\[\]{}]")
# libcst's "expected one of ..." lists longer than this say nothing a reader can use.
_MAX_EXPECTED_TOKENS = 4


class SourceError(Exception):
    """A file we cannot analyse; `line`/`column` are 1-based when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Source:
    path: str
    text: str
    data: bytes
    # (modification time in ns, size) of the file it was read from; None for an editor's buffer.
    signature: tuple[int, int] | None = None


def disk_signature(path: str) -> tuple[int, int] | None:
    """What `Source.signature` would be if the file were read now; None when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def read_source(path: str) -> Source:
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            data = handle.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("permission denied: file is not readable") from None
    except OSError as error:
        raise SourceError(f"cannot read file: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; skipped")
    return Source(path, notebook_source(data) if is_notebook(path) else decode_source(data), data,
                  (status.st_mtime_ns, status.st_size))


def notebook_source(data: bytes) -> str:
    """A notebook's code cells as one module (see breakscan/notebook.py)."""
    try:
        text = notebook_code(data.decode("utf-8")).text
    except UnicodeDecodeError as error:
        raise SourceError(f"not a valid notebook: cannot decode as utf-8: {error.reason}") from None
    except NotebookError as error:
        raise SourceError(str(error)) from None
    if "\0" in text:
        raise SourceError("source contains a NUL byte")
    check_bracket_depth(text.encode("utf-8", "surrogatepass"))
    return text


def decode_source(data: bytes) -> str:
    """Decode as Python does: BOM or PEP 263 coding cookie, else UTF-8."""
    nul = data.find(b"\0")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        raise SourceError("source contains a NUL byte", line, nul - data.rfind(b"\n", 0, nul))
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"bad encoding declaration: {error.msg}", error.lineno) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise SourceError(f"cannot decode as {encoding}: {error.reason}", line, column) from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} in coding declaration", 1) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    check_bracket_depth(data)
    return text


def check_bracket_depth(data: bytes) -> None:
    """A cheap over-estimate (brackets in strings count too); only deep files pay for `compile`."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(data):
        depth += 1 if match.group() in b"([{" else -1
        deepest = max(deepest, depth)
    if deepest <= MAX_BRACKET_DEPTH:
        return
    try:
        compile(data, "<checked>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as error:
        raise SourceError(f"syntax error: {error.msg}", error.lineno, error.offset) from None
    except (RecursionError, MemoryError):
        raise SourceError("nesting too deep to analyse") from None


def syntax_error(text: str, parser_message: str, line: int, column: int) -> SourceError:
    """For code libcst's parser refused (at `line`, `column`): Python's own message and place, as
    `compile()` gives them. Only code Python accepts (grammar libcst does not know) gets libcst's
    words, without a long list of the tokens it expected."""
    import ast

    try:
        ast.parse(text)
    except SyntaxError as error:
        return SourceError(f"syntax error: {error.msg}", error.lineno, error.offset)
    except (RecursionError, MemoryError, ValueError):
        pass
    detail = parser_message.strip().splitlines()[0] if parser_message.strip() else ""
    detail = re.sub(r"^parser error: error at \d+:\d+: ", "", detail)
    if detail.startswith("expected one of ") and detail.count(",") >= _MAX_EXPECTED_TOKENS:
        detail = ""
    return SourceError(f"syntax not supported by libcst's parser{': ' + detail if detail else ''}", line, column)


def check_expression_size(text: str) -> None:
    if max(map(len, text.splitlines()), default=0) <= LONG_LINE:
        return
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise SourceError(f"syntax error: {error.msg}", error.lineno, error.offset) from None
    except (RecursionError, MemoryError):
        raise SourceError("expression nested too deeply to analyse") from None
    stack = [(tree, 0)]
    while stack:
        node, chain = stack.pop()
        if chain > MAX_CHAIN:
            raise SourceError(f"an operator chain longer than {MAX_CHAIN} terms; too large to analyse",
                              getattr(node, "lineno", None))
        for child in ast.iter_child_nodes(node):
            grows = isinstance(child, (ast.BinOp, ast.Compare)) and isinstance(node, (ast.BinOp, ast.Compare))
            stack.append((child, chain + 1 if grows else 0))
