"""A content-hash cache of per-file lint results.

An entry is keyed by breakscan's version, the rule configuration, the set of scanned modules and
the file's own bytes; it also records the bytes' hash of every other file the result depended on
(helpers reached in other files), which are re-checked on a hit. Entries are written to a temporary
file and renamed into place, so concurrent runs never see half an entry.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile

from breakscan import __version__
from breakscan.config import Config
from breakscan.lint.engine import FileSet, LintSettings, UnitResult

CACHE_DIR_NAME = ".breakscan_cache"


def _digest(*parts: bytes) -> str:
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))
        hasher.update(part)
    return hasher.hexdigest()


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


class LintCache:
    def __init__(self, directory: str):
        self.directory = directory
        self._fingerprints: dict[int, bytes] = {}

    def _settings_fingerprint(self, settings: LintSettings, files: FileSet) -> bytes:
        key = id(settings), id(files)
        if key not in self._fingerprints:
            description = repr((__version__, [r.id for r in settings.rules], settings.roots, settings.unreachable,
                                sorted(files.by_module.items())))
            self._fingerprints[key] = description.encode()
        return self._fingerprints[key]

    def _entry_path(self, path: str, data: bytes, settings: LintSettings, files: FileSet) -> str:
        key = _digest(self._settings_fingerprint(settings, files), os.path.abspath(path).encode(), data)
        return os.path.join(self.directory, key[:2], key)

    def get(self, path: str, settings: LintSettings, files: FileSet) -> UnitResult | None:
        data = _read(path)
        if data is None:
            return None
        try:
            with open(self._entry_path(path, data, settings, files), "rb") as handle:
                dependencies, result = pickle.load(handle)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
            return None
        for dependency, digest in dependencies.items():
            current = _read(dependency)
            if current is None or _digest(current) != digest:
                return None
        return result

    def put(self, path: str, settings: LintSettings, files: FileSet, result: UnitResult) -> None:
        data = result.dependencies.get(path)
        if data is None:
            return  # unreadable files are not cached: the error must be re-checked next time
        dependencies = {dep: _digest(content) for dep, content in result.dependencies.items() if dep != path}
        target = self._entry_path(path, data, settings, files)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            stored = UnitResult(result.findings, result.errors, result.suppressions, {}, result.declares_targets)
            with tempfile.NamedTemporaryFile("wb", dir=os.path.dirname(target), delete=False) as handle:
                pickle.dump((dependencies, stored), handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(handle.name, target)
        except OSError:
            pass  # a read-only or full disk only costs speed


def open_cache(config: Config) -> LintCache:
    directory = os.environ.get("BREAKSCAN_CACHE_DIR") or os.path.join(
        config.base if config.path else os.getcwd(), CACHE_DIR_NAME)
    return LintCache(directory)
