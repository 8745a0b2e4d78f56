"""A content-hash cache of per-file lint results.

An entry is keyed by breakscan's own code, the rule configuration, the set of scanned modules and
the file's own bytes; it also records the bytes' hash of every other file the result depended on
(helpers reached in other files), which are re-checked on a hit, and which scanned files defined
subclasses of the classes it asked about. Entries are JSON (see plain_json),
written to a temporary file and renamed into place, so concurrent runs never see half an entry;
an entry that cannot be read is a miss.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from breakscan import __version__
from breakscan.config import Config
from breakscan.lint.source import disk_signature
from breakscan.lint.units import FileSet, LintSettings, UnitResult
from breakscan.plain_json import from_plain, to_plain

CACHE_DIR_NAME = ".breakscan_cache"


def _digest(*parts: bytes) -> str:
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))
        hasher.update(part)
    return hasher.hexdigest()


@functools.cache
def _code_fingerprint() -> bytes:
    """breakscan's own sources and the data its rules read (the catalogue, torch's declared
    results): a changed rule or table must not be answered from an older one's results."""
    return package_fingerprint(Path(__file__).parent)


def package_fingerprint(package: Path) -> bytes:
    parts = [__version__.encode()]
    for source in sorted([*package.rglob("*.py"), *package.rglob("*.json")]):
        parts += [str(source.relative_to(package)).encode(), source.read_bytes()]
    return _digest(*parts).encode()


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
        # path -> (disk signature, digest) of the files results depend on: a hub module that many
        # results depend on is read and hashed once per run, not once per result.
        self._digests: dict[str, tuple[tuple[int, int], str]] = {}

    def _current_digest(self, path: str) -> str | None:
        signature = disk_signature(path)
        known = self._digests.get(path)
        if signature is not None and known is not None and known[0] == signature:
            return known[1]
        data = _read(path)
        if data is None:
            return None
        digest = _digest(data)
        if signature is not None:
            self._digests[path] = (signature, digest)
        return digest

    def _settings_fingerprint(self, settings: LintSettings, files: FileSet) -> bytes:
        key = id(settings), id(files)
        if key not in self._fingerprints:
            description = repr((_code_fingerprint(), settings.rule_ids, settings.roots,
                                settings.unreachable, settings.dynamo, settings.fixes, sorted(files.by_module.items()), files.resolver.src_roots,
                                files.resolver.follow))
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
                entry = json.load(handle)
            result = from_plain(UnitResult, entry["result"])
            dependencies = entry["dependencies"].items()
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # missing, or corrupt: lint again (and overwrite it)
        for dependency, digest in dependencies:
            if self._current_digest(dependency) != digest:
                return None
        if any(os.path.exists(path) for path in result.absent):
            return None  # a module an import could not find has appeared
        if any(files.deriving_from(name) != paths for name, paths in result.derivations.items()):
            return None  # a class statement naming a base the lint asked about came or went
        if any(files.implementing(name) != paths for name, paths in result.implementations.items()):
            return None  # so did a method a duck-typed call may run
        return result

    def put(self, path: str, settings: LintSettings, files: FileSet, result: UnitResult) -> None:
        data = result.dependencies.get(path)
        if data is None:
            return  # unreadable files are not cached: the error must be re-checked next time
        dependencies = {dep: _digest(content) for dep, content in result.dependencies.items() if dep != path}
        target = self._entry_path(path, data, settings, files)
        stored = to_plain(dataclasses.replace(result, dependencies={}))
        entry = json.dumps({"dependencies": dependencies, "result": stored})
        try:
            self._create_directory()
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(target), delete=False) as handle:
                handle.write(entry)
            os.replace(handle.name, target)
        except OSError:
            pass  # a read-only or full disk only costs speed

    def _create_directory(self) -> None:
        """The cache folder ignores itself, so it never shows in `git status` (nor gets committed)."""
        if not os.path.isdir(self.directory):
            os.makedirs(self.directory, exist_ok=True)
            with open(os.path.join(self.directory, ".gitignore"), "w") as handle:
                handle.write("# Created by breakscan.\n*\n")


def open_cache(config: Config) -> LintCache:
    directory = os.environ.get("BREAKSCAN_CACHE_DIR") or os.path.join(
        config.base if config.path else os.getcwd(), CACHE_DIR_NAME)
    return LintCache(directory)
