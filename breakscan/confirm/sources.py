"""Running the user's code with some files' text replaced, without touching the files: how a
fix is tried before it is written. Runs in the worker only.

`use_sources({path: text})` forgets every module of the user's project imported so far (torch
and other libraries stay), then imports the given paths from the given text (their file names
and line numbers are the files' own, so breaks are attributed as usual) and the others from disk.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from types import CodeType, ModuleType


class _TextLoader(importlib.machinery.SourceFileLoader):
    """Loads `path` from `text`; never from the file or its cached bytecode."""

    def __init__(self, fullname: str, path: str, text: str):
        super().__init__(fullname, path)
        self.text = text

    def get_code(self, fullname: str) -> CodeType:
        return compile(self.text, self.path, "exec", dont_inherit=True)

    def get_source(self, fullname: str) -> str:
        return self.text


class _TextFinder(importlib.abc.MetaPathFinder):
    def __init__(self, texts: Mapping[str, str]):
        self.texts = {os.path.realpath(path): text for path, text in texts.items()}

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None):
        found = importlib.machinery.PathFinder.find_spec(fullname, path)
        text = self.texts.get(os.path.realpath(found.origin)) if found and found.origin else None
        if text is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, found.origin, loader=_TextLoader(fullname, found.origin, text),
            submodule_search_locations=found.submodule_search_locations)

    def loader_for(self, name: str, path: str) -> _TextLoader | None:
        text = self.texts.get(os.path.realpath(path))
        return _TextLoader(name, path, text) if text is not None else None


_active: _TextFinder | None = None


def use_sources(texts: Mapping[str, str], is_user_file: Callable[[str], bool], forget: Callable[[], None]) -> None:
    """Import the user's modules afresh from now on, with `texts` in place of those files;
    `forget` drops what the caller keeps of the modules imported so far."""
    global _active
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and is_user_file(path):
            del sys.modules[name]
    forget()
    if _active is not None:
        sys.meta_path.remove(_active)
    _active = _TextFinder(texts)
    sys.meta_path.insert(0, _active)
    importlib.invalidate_caches()


def text_loader(name: str, path: str) -> _TextLoader | None:
    """The loader of a file whose text was replaced, for a file imported by path."""
    return _active.loader_for(name, path) if _active is not None else None
