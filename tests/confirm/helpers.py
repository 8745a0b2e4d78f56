"""Paths of the confirmation fixtures and the lines their `# MARKER` comments tag."""

import fcntl
import json
import os

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "fixtures", "confirm")
FIXTURES = os.path.normpath(FIXTURES)


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


def line_of(name: str, marker: str) -> int:
    """The line of `fixture(name)` carrying the comment `# MARKER`."""
    with open(fixture(name), encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return number
    raise LookupError(marker)


def same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)



def _under_xdist(request) -> bool:
    return hasattr(request.config, "workerinput")


def session_folder(request, tmp_path_factory, name: str):
    """A folder for this test session, the same for every pytest-xdist worker."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if _under_xdist(request) else base) / name
    folder.mkdir(exist_ok=True)
    return folder


def once_per_session_json(request, tmp_path_factory, name: str, compute):
    """`compute()` run once per test session even under pytest-xdist, where each worker process
    would otherwise run a module fixture itself (the xdist docs' file-lock recipe). Its value
    must be JSON: that is how it travels between workers."""
    if not _under_xdist(request):
        return json.loads(json.dumps(compute()))
    shared = tmp_path_factory.getbasetemp().parent  # this session's folder, common to workers
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = shared / f"{name}.json"
        if cached.exists():
            return json.loads(cached.read_text())
        value = compute()
        cached.write_text(json.dumps(value))
        return json.loads(cached.read_text())


def once_per_session(request, tmp_path_factory, name: str, compute):
    """`once_per_session_json` for a list of TargetResults."""
    from breakscan.confirm.protocol import result_from_json, result_to_json

    data = once_per_session_json(request, tmp_path_factory, name, lambda: [result_to_json(r) for r in compute()])
    return [result_from_json(r) for r in data]
