"""How accurate is the static lint on real model libraries? Measured against TorchDynamo itself, in the
spirit of ruff's ecosystem check and mypy_primer.

    python bench/ecosystem.py setup              # scratch venv with the pinned libraries (once)
    python bench/ecosystem.py truth              # run the models, store the ground truth (minutes)
    python bench/ecosystem.py [score] [--save]   # lint the libraries, score, diff against the baseline

`truth` builds small random-weight models from each library's own configs and constructors
(bench/ecosystem_models.py; nothing is downloaded) and runs each one twice, each time in a fresh
process of the venv (bench/ecosystem_worker.py) with a timeout:

- eagerly, with a line tracer restricted to the library's package folder: the lines that ran. The
  call runs inside `torch.compiler._compile_session_context()`, the context torch.compile itself
  holds while compiling, so `torch.compiler.is_compiling()` and everything that reads it
  (`torch._dynamo.is_compiling`, `torch._utils.is_compiling`, `torch._dynamo.external_utils.is_compiling`,
  transformers' `is_torchdynamo_compiling`, kornia's and torch-geometric's `is_compiling`) returns
  True, and `torch.compiler.is_dynamo_compiling()` is made to: the eager run takes the branches
  TorchDynamo traces. Only the call is flagged (imports and construction run eagerly under
  torch.compile too), and each run is a fresh process, so no cache carries over from another run;
- under `torch.compile(backend="eager")` with breakscan's own capture: every break occurrence,
  merged into sites at the innermost frame inside the library's package folder, with its GB id.

A model that fails to build or run, times out or crashes is stored as skipped, with the reason.
The ground truth goes to bench/ecosystem/<library>.json: pinned versions, and per model its status,
the lines that ran (per file relative to the package folder, as ranges) and its break sites.

`score` works from that data alone (no model runs): it lints each installed package folder with the
working tree's `breakscan check --static --format json --no-cache` (or another tree's: `--breakscan DIR`,
e.g. a `git worktree` of the commit to compare with), matches findings and breaks by
(file relative to the package folder, line), and reports per library:

- recall: break sites with a finding on their line (or on an earlier line of the same construct, with
  the same GB id and no finding on theirs, as the fuser matches them) / all break sites;
- precision on executed code: a finding whose flagged code ran eagerly (an instruction that ran starts
  inside its span: the eager run records the position of every instruction, so the right operand of a
  short-circuited `and` on a line that ran does not count) and is not a break site is a false alarm;
  one on code that never ran is not counted; true / all findings on code that ran;
- error precision: the same for `error` findings alone (what a hook with `fail-on = "error"` blocks
  on; a `warning` says what the analysis is unsure of);
- false alarms per executed kloc (lines that ran / 1000).

Every false alarm and missed site goes to bench/ecosystem/details.txt, the first `--top` on stdout.
The figures are compared with the saved baseline (bench/ecosystem/figures.json): what got better or
worse per library, and which false alarms and sites flipped. `--save` makes this run the baseline.

In transformers' `models/` and diffusers' `pipelines/` and `modular_pipelines/` folders (hundreds of
model families; the whole of transformers alone takes the lint ~10 minutes and 2 GB) only the entries
where some line ran are linted; shared code they call is linted whole, and helpers elsewhere are
found on disk as in any lint.

Exit codes: 0 done, 2 usage or set-up error (no venv, versions not the pinned ones, no ground truth).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "ecosystem"
BASELINE = DATA / "figures.json"
DETAILS = DATA / "details.txt"
RECOMPILE_RULES = "BR"  # the ids of recompile rules (breakscan.model.RECOMPILE_RULES): they claim a recompilation
WORKER = BENCH / "ecosystem_worker.py"
STUBS = BENCH / "ecosystem_stubs"  # stand-ins for requirements the venv cannot hold (Library.stubs)
DEFAULT_VENV = BENCH / ".venv-ecosystem"
CONSTRAINTS = REPO / "constraints.txt"  # torch==2.13.0: an unpinned torch would pull a multi-GB CUDA build
TORCH = "2.13.0"


@dataclass(frozen=True)
class Library:
    name: str  # as on PyPI
    package: str  # as imported
    version: str  # verified to install and run with torch 2.13.0 (CPU) and Python 3.11
    sparse: tuple[str, ...] = ()  # folders of many independent families: lint only the entries that ran
    # Library functions the models compile as entry points of their own (not a module's forward): told to
    # the lint as config `roots`, as a user whose training script compiles them would.
    roots: tuple[str, ...] = ()
    # Requirements that cannot be installed beside the CPU torch (torchvision's PyPI wheels are CUDA builds):
    # the library is installed without its requirements and the workers import bench/ecosystem_stubs/<name>.
    stubs: tuple[str, ...] = ()


LIBRARIES = [
    Library("transformers", "transformers", "5.23.0", sparse=("models",)),
    Library("diffusers", "diffusers", "0.42.1", sparse=("pipelines", "modular_pipelines"),
            roots=("DDIMScheduler.step", "EulerDiscreteScheduler.step")),
    Library("kornia", "kornia", "0.9.0", roots=("gaussian_blur2d", "equalize", "dilation", "harris_response",
                                                 "warp_perspective", "get_perspective_transform")),
    Library("x-transformers", "x_transformers", "2.31.10"),
    Library("vector-quantize-pytorch", "vector_quantize_pytorch", "1.32.0"),
    Library("torch-geometric", "torch_geometric", "2.8.1"),
    # Added after the lint's rules were written, as code it had never been tuned on.
    Library("monai", "monai", "1.6.1"),
    Library("torchdiffeq", "torchdiffeq", "0.2.5", roots=("odeint", "odeint_adjoint")),
    Library("pytorch-metric-learning", "pytorch_metric_learning", "2.9.0"),
    Library("zuko", "zuko", "1.6.0", roots=("NormalizingFlow.log_prob", "NormalizingFlow.rsample")),
    # Added as held-out code: measured before any change made for them.
    Library("torchsde", "torchsde", "0.2.6", roots=("sdeint", "sdeint_adjoint")),
    Library("nflows", "nflows", "0.14", roots=("Distribution.log_prob", "Distribution.sample")),
    Library("torchmetrics", "torchmetrics", "1.9.0", roots=tuple(f"functional.{name}" for name in (
        "classification.accuracy.accuracy", "classification.f_beta.f1_score", "classification.auroc.auroc",
        "regression.mse.mean_squared_error", "regression.pearson.pearson_corrcoef", "regression.r2.r2_score",
        "regression.spearman.spearman_corrcoef",
        # What `torchmetrics.functional.<name>` is for these two: a wrapper that warns first.
        "image._deprecated._structural_similarity_index_measure", "image._deprecated._peak_signal_noise_ratio"))),
    Library("gpytorch", "gpytorch", "1.15.2", roots=("Kernel.__call__", "ExactGP.__call__",
                                                      "MultivariateNormal.log_prob")),
    Library("e3nn", "e3nn", "0.6.0", roots=("spherical_harmonics",)),
    Library("fair-esm", "esm", "2.0.0"),
    Library("pyro-ppl", "pyro", "1.9.2", roots=(
        "Trace_ELBO.differentiable_loss", "TraceMeanField_ELBO.differentiable_loss",
        "AffineAutoregressive.log_abs_det_jacobian", "AffineAutoregressive._inverse",
        "SplineCoupling.log_abs_det_jacobian", "SplineCoupling._inverse",
        "SplineAutoregressive.log_abs_det_jacobian", "SplineAutoregressive._inverse")),
    Library("peft", "peft", "0.21.2", sparse=("tuners",)),
    Library("reformer-pytorch", "reformer_pytorch", "1.4.4"),
    Library("snntorch", "snntorch", "1.0.0", roots=("LossFunctions.__call__", "spikegen.rate", "utils.reset")),
    Library("pytorch-tabnet", "pytorch_tabnet", "4.1.0"),
    Library("entmax", "entmax", "1.3"),
    Library("mambapy", "mambapy", "1.2.0"),
    Library("torchcde", "torchcde", "0.2.5", roots=("cdeint", "natural_cubic_coeffs", "linear_interpolation_coeffs",
                                                    "hermite_cubic_coefficients_with_backward_differences")),
    Library("normflows", "normflows", "1.7.3", roots=("NormalizingFlow.log_prob", "NormalizingFlow.sample",
                                                      "NormalizingFlow.forward_kld")),
    Library("torchode", "torchode", "1.0.1", roots=("AutoDiffAdjoint.solve",)),
    Library("geoopt", "geoopt", "0.5.1", roots=tuple(f"{cls}.{op}" for cls, op in (
        ("PoincareBall", "expmap"), ("PoincareBall", "dist"), ("PoincareBall", "mobius_add"),
        ("Stereographic", "logmap"), ("Sphere", "retr"), ("EuclideanStiefel", "retr"),
        ("EuclideanStiefel", "proju"), ("Lorentz", "expmap")))),
    Library("local-attention", "local_attention", "1.11.2"),
    Library("perceiver-pytorch", "perceiver_pytorch", "0.11.0"),
    # `torch.compile(optimizer.step)`: each optimizer's `step` is the entry point.
    Library("pytorch-optimizer", "pytorch_optimizer", "4.1.0", roots=tuple(f"{name}.step" for name in (
        "AdamP", "Lamb", "Lion", "AdaBelief", "MADGRAD", "Adan", "Prodigy", "Adai", "CAME"))),
    Library("schedulefree", "schedulefree", "1.4.1", roots=tuple(f"{name}.step" for name in (
        "AdamWScheduleFree", "SGDScheduleFree", "RAdamScheduleFree"))),
    Library("st-moe-pytorch", "st_moe_pytorch", "0.1.8"),
    # Added as held-out code in this round: measured before any change made for them.
    Library("botorch", "botorch", "0.18.1", roots=(
        "BatchedMultiOutputGPyTorchModel.posterior",)),
    Library("performer-pytorch", "performer_pytorch", "1.1.4"),
    Library("rotary-embedding-torch", "rotary_embedding_torch", "0.9.1", roots=tuple(
        f"RotaryEmbedding.{name}" for name in ("rotate_queries_or_keys", "rotate_queries_and_keys",
                                               "rotate_queries_with_cached_keys", "get_axial_freqs"))
        + ("apply_rotary_emb", "apply_learned_rotations")),
    Library("mixture-of-experts", "mixture_of_experts", "0.2.3"),
    Library("linear-attention-transformer", "linear_attention_transformer", "0.19.1"),
    Library("hyper-connections", "hyper_connections", "0.4.11"),
    # Added as held-out code in the next round: measured before any change made for them.
    Library("routing-transformer", "routing_transformer", "1.6.1"),
    Library("torchkbnufft", "torchkbnufft", "1.5.2"),
    Library("freia", "FrEIA", "0.2"),
    Library("tab-transformer-pytorch", "tab_transformer_pytorch", "0.6.1"),
    Library("deepxde", "deepxde", "1.15.0", roots=("gradients.gradients.jacobian", "gradients.gradients.hessian")),
    # Added as held-out code on 2026-11-27: measured before any change made for them.
    Library("auraloss", "auraloss", "0.4.0"),
    Library("julius", "julius", "0.2.8", roots=("resample_frac", "lowpass_filter", "fft_conv1d")),
    Library("ncps", "ncps", "1.0.1"),
    Library("conformer", "conformer", "0.3.2"),
    Library("pytorch-msssim", "pytorch_msssim", "1.0.0", roots=("ssim", "ms_ssim")),
    Library("timm", "timm", "1.0.31", sparse=("models",), stubs=("torchvision",)),
    Library("vit-pytorch", "vit_pytorch", "1.26.11", stubs=("torchvision",)),
    Library("segmentation-models-pytorch", "segmentation_models_pytorch", "0.6.0", stubs=("torchvision",)),
    Library("nnAudio", "nnAudio", "0.3.4"),
    Library("kymatio", "kymatio", "0.3.0"),
    Library("flow_matching", "flow_matching", "1.0.10", roots=(
        "AffineProbPath.sample", "AffineProbPath.target_to_velocity", "AffineProbPath.epsilon_to_velocity",
        "GeodesicProbPath.sample", "MixtureDiscreteProbPath.sample", "ODESolver.sample",
        "ODESolver.compute_likelihood", "RiemannianODESolver.sample", "MixtureDiscreteEulerSolver.sample")),
    Library("neuraloperator", "neuralop", "2.0.0", roots=("LpLoss.__call__", "H1Loss.__call__")),
    Library("geomloss", "geomloss", "0.3.1", roots=(
        "solve_sample", "ot._implementations.matrix.solve", "solve_batch", "OTResult._value", "OTResultSample._plan")),
    Library("siren-pytorch", "siren_pytorch", "0.1.7"),
    Library("pytorch-tcn", "pytorch_tcn", "1.2.3"),
    Library("egnn-pytorch", "egnn_pytorch", "0.2.8"),
    Library("stable-baselines3", "stable_baselines3", "2.9.2", roots=(
        "ActorCriticPolicy.evaluate_actions", "sac.policies.Actor.action_log_prob", "ContinuousCritic.q1_forward")),
]
BY_NAME = {library.name: library for library in LIBRARIES}

# Nothing a model run does may reach the network (the hub clients would try, for a missing file).
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


class SetupError(Exception):
    """The venv or the stored data is not what this script needs: exit 2 with the message."""


# the venv ----------------------------------------------------------------------------------------

def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def setup(venv: Path) -> None:
    """Create the venv (reusing the system's torch 2.13.0) and install the pinned libraries."""
    if not venv_python(venv).exists():
        run_checked([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    pins = [f"{library.name}=={library.version}" for library in LIBRARIES if not library.stubs]
    run_checked([str(venv_python(venv)), "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), f"torch=={TORCH}",
                 *pins])
    stubbed = [f"{library.name}=={library.version}" for library in LIBRARIES if library.stubs]
    if stubbed:  # their other requirements are among the libraries' above
        run_checked([str(venv_python(venv)), "-m", "pip", "install", "-q", "--no-deps", "-c", str(CONSTRAINTS),
                     *stubbed])
    installed = installed_libraries(venv)
    print(f"venv {venv}: torch {installed['torch']['version']}, "
          + ", ".join(f"{library.name} {installed[library.name]['version']}" for library in LIBRARIES))


def run_checked(command: list[str]) -> None:
    if subprocess.run(command).returncode != 0:
        raise SetupError(f"failed: {' '.join(command)}")


INSPECT = """
import importlib.metadata, importlib.util, json, os, sys
found = {}
for name, package in json.loads(sys.argv[1]).items():
    spec = importlib.util.find_spec(package)
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = None
    folder = os.path.realpath(list(spec.submodule_search_locations)[0]) if spec else None
    found[name] = {"version": version, "dir": folder}
print(json.dumps(found))
"""


def installed_libraries(venv: Path) -> dict[str, dict]:
    """{name: {"version", "dir"}} for torch and each library, as the venv sees them (without importing them)."""
    python = venv_python(venv)
    if not python.exists():
        raise SetupError(f"no venv at {venv}: run `python bench/ecosystem.py setup --venv {venv}` first")
    names = {"torch": "torch", **{library.name: library.package for library in LIBRARIES}}
    done = subprocess.run([str(python), "-c", INSPECT, json.dumps(names)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SetupError(f"cannot inspect the venv {venv}:\n{done.stderr}")
    return json.loads(done.stdout)


def check_pins(installed: dict[str, dict], libraries: Iterable[Library]) -> None:
    wrong = [f"{library.name} {installed[library.name]['version']} (pinned {library.version})"
             for library in libraries if installed[library.name]["version"] != library.version]
    if not (installed["torch"]["version"] or "").startswith(TORCH):
        wrong.append(f"torch {installed['torch']['version']} (pinned {TORCH})")
    if wrong:
        raise SetupError(f"not the pinned versions: {', '.join(wrong)}; run `python bench/ecosystem.py setup`")


# the ground truth --------------------------------------------------------------------------------

def worker_env(library: Library) -> dict[str, str]:
    # The working tree's breakscan and bench/ecosystem_models.py, whatever the venv holds; the library's stubs.
    stubs = [str(STUBS)] if library.stubs else []
    return {**os.environ, **OFFLINE, "PYTHONPATH": os.pathsep.join([*stubs, str(REPO), str(BENCH)])}


def model_names(venv: Path, library: Library) -> list[str]:
    done = subprocess.run([str(venv_python(venv)), str(WORKER), "--list", library.name], capture_output=True,
                          text=True, env=worker_env(library))
    if done.returncode != 0:
        raise SetupError(f"cannot list the models of {library.name}:\n{done.stderr}")
    return json.loads(done.stdout)


def run_worker(venv: Path, library: Library, model: str, mode: str, timeout: float) -> dict:
    """One worker run; whatever goes wrong becomes {"status": "failed", "error": ...}."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = os.path.join(folder, "result.json")
        command = [str(venv_python(venv)), str(WORKER), library.name, library.package, model, mode, result_path]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  env=worker_env(library))
        except subprocess.TimeoutExpired:
            return {"status": "failed", "error": f"timeout after {timeout:.0f} s"}
        if not os.path.exists(result_path):
            last = next(iter(done.stderr.strip().splitlines()[-1:]), "")
            return {"status": "failed", "error": f"crashed (exit code {done.returncode}): {last}"}
        with open(result_path, encoding="utf-8") as handle:
            return json.load(handle)


def model_truth(name: str, eager: dict, dynamo: dict) -> dict:
    failed = [(mode, run) for mode, run in (("eager", eager), ("dynamo", dynamo)) if run["status"] != "ok"]
    if failed:
        reason = "; ".join(f"{mode} run: {run['error']}" for mode, run in failed)
        return {"name": name, "status": "skipped", "reason": reason}
    return {"name": name, "status": "ok", "graphs": dynamo["graphs"], "executed": eager["lines"],
            "positions": eager["positions"], "breaks": dynamo["breaks"], "recompiles": dynamo["recompiles"],
            **({"repeat_error": dynamo["repeat_error"]} if "repeat_error" in dynamo else {})}


def generate_truth(venv: Path, libraries: list[Library], only: list[str] | None, jobs: int, timeout: float) -> None:
    """Run every model of `libraries` (or only the models named in `only`, keeping the others' stored truth)."""
    installed = installed_libraries(venv)
    check_pins(installed, libraries)
    DATA.mkdir(exist_ok=True)
    for library in libraries:
        started = time.perf_counter()
        all_names = model_names(venv, library)
        stored = {m["name"]: m for m in load_truth(library)["models"]} if only else {}
        unknown = sorted(set(only or ()) - set(all_names))
        if unknown:
            raise SetupError(f"{library.name} has no model {', '.join(unknown)}; it has {', '.join(all_names)}")
        names = [name for name in all_names if not only or name in only]
        tasks = [(name, mode) for name in names for mode in ("eager", "dynamo")]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            done = pool.map(partial(run_worker, venv, library, timeout=timeout), *zip(*tasks))
            runs = dict(zip(tasks, done))
        fresh = {name: model_truth(name, runs[name, "eager"], runs[name, "dynamo"]) for name in names}
        models = [fresh.get(name) or stored[name] for name in all_names if name in fresh or name in stored]
        truth = {"library": library.name, "package": library.package, "version": library.version,
                 "torch": installed["torch"]["version"], "python": f"{sys.version_info.major}.{sys.version_info.minor}",
                 "models": models}
        path = DATA / f"{library.name}.json"
        path.write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
        ok = sum(model["status"] == "ok" for model in models)
        sites = {(b["path"], b["line"]) for m in models for b in m.get("breaks", ()) if b["in_library"]}
        print(f"{library.name} {library.version}: {ok}/{len(models)} models ran ({len(names)} run now), "
              f"{len(sites)} break sites, {time.perf_counter() - started:.0f} s -> {path.relative_to(REPO)}")
        for model in models:
            if model["status"] != "ok":
                print(f"  skipped {model['name']}: {model['reason']}")


def load_truth(library: Library) -> dict:
    path = DATA / f"{library.name}.json"
    if not path.exists():
        raise SetupError(f"no ground truth at {path}: run `python bench/ecosystem.py truth`")
    truth = json.loads(path.read_text(encoding="utf-8"))
    if truth["version"] != library.version:
        raise SetupError(f"{path} is for {library.name} {truth['version']}, pinned {library.version}: "
                         "run `python bench/ecosystem.py truth`")
    return truth


def parse_ranges(text: str) -> set[int]:
    """"1-3,7" -> {1, 2, 3, 7}."""
    lines: set[int] = set()
    for part in text.split(","):
        start, _, end = part.partition("-")
        lines.update(range(int(start), int(end or start) + 1))
    return lines


# the lint ----------------------------------------------------------------------------------------

def lint_paths(root: str, library: Library, executed_files: Iterable[str]) -> list[str]:
    """The package folder, except that in its sparse folders only the entries where a line ran."""
    if not library.sparse:
        return [root]
    ran = {Path(path).parts for path in executed_files}
    paths = []
    for entry in sorted(os.listdir(root)):
        if entry not in library.sparse:
            paths.append(os.path.join(root, entry))
            continue
        used = sorted({parts[1] for parts in ran if len(parts) > 1 and parts[0] == entry})
        paths += [os.path.join(root, entry, child) for child in used]
    return [p for p in paths if os.path.isdir(p) or p.endswith(".py")]


def lint(root: str, paths: list[str], source: Path, roots: tuple[str, ...] = ()) -> list[dict]:
    """The static lint of `paths` by the breakscan in the source tree `source` (with `roots` as config roots),
    findings with paths relative to `root`."""
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder, "breakscan.toml")
        config.write_text(f"roots = {json.dumps(list(roots))}\n")
        command = [sys.executable, "-m", "breakscan", "check", "--static", "--format", "json", "--no-cache",
                   "--config", str(config), *paths]
        done = subprocess.run(command, capture_output=True, text=True, cwd=source)  # `-m` imports from the cwd first
    if done.returncode not in (0, 1):  # 1: findings (older trees, which `--breakscan` may name, lack --exit-zero)
        raise SetupError(f"the lint failed (exit code {done.returncode}):\n{done.stderr[-2000:]}")
    findings = json.loads(done.stdout)["findings"]
    for finding in findings:
        finding["path"] = os.path.relpath(os.path.realpath(finding["path"]), root)
    return findings


# the score ---------------------------------------------------------------------------------------

def parse_positions(text: str) -> set[tuple[int, int]]:
    """"3:4.8;5:0" -> {(3, 4), (3, 8), (5, 0)}."""
    found = set()
    for part in filter(None, text.split(";")):
        line, _, columns = part.partition(":")
        found.update((int(line), int(column)) for column in columns.split("."))
    return found


def ran(finding: dict, lines: set[int], positions: set[tuple[int, int]] | None) -> bool:
    """Whether the flagged code itself ran: an instruction that ran starts inside its span (a short-circuited
    operand never does), or, for ground truth recorded before positions were, its line ran."""
    if positions is None:
        return finding["line"] in lines
    start, end = (finding["line"], finding["column"] - 1), (finding["end_line"], finding["end_column"] - 1)
    return any(start <= position < end for position in positions if start[0] <= position[0] <= end[0])


def score(truth: dict, findings: list[dict]) -> dict:
    executed: dict[str, set[int]] = defaultdict(set)
    positions: dict[str, set[tuple[int, int]]] | None = defaultdict(set)
    sites: dict[tuple[str, int], dict] = {}
    recompiled: dict[tuple[str, int], dict] = {}  # where a failed guard read its value, on the later calls
    models = [m for m in truth["models"] if m["status"] == "ok"]
    for model in models:
        for path, text in model["executed"].items():
            executed[path] |= parse_ranges(text)
        if "positions" not in model:
            positions = None
        elif positions is not None:
            for path, text in model["positions"].items():
                positions[path] |= parse_positions(text)
        for brk in model["breaks"]:
            if not brk["in_library"]:
                continue
            site = sites.setdefault((brk["path"], brk["line"]),
                                    {"gb_ids": set(), "models": set(), "reason": brk["reason"]})
            site["gb_ids"].add(brk["gb_id"] or "no GB id")
            site["models"].add(model["name"])
        for event in model.get("recompiles", ()):
            if event["in_library"]:
                recompiled.setdefault((event["path"], event["line"]), {"guard": event["guard"], "models": set()})[
                    "models"].add(model["name"])
    # A recompile rule's finding (BR) claims a recompilation, not a break: it is judged against
    # what recompiled; every other finding against the break sites.
    recompile_findings = [f for f in findings if f["rule"].startswith(RECOMPILE_RULES)]
    findings = [f for f in findings if not f["rule"].startswith(RECOMPILE_RULES)]
    by_line: dict[tuple[str, int], set[str]] = defaultdict(set)
    for finding in findings:
        by_line[finding["path"], finding["line"]].add(finding["rule"])
    # A finding on a construct over several lines also finds a site on a later line of it, as the fuser
    # matches it (breakscan.confirm.fuse): same GB id, and no other finding starts there.
    spanned = {(f["path"], f["line"]): (f["path"], line) for f in findings
               for line in range(f["line"] + 1, f["end_line"] + 1)
               if (f["path"], line) in sites and (f["path"], line) not in by_line
               and sites[f["path"], line]["gb_ids"] & set(f["gb_ids"])}
    ran_lines: set[tuple[str, int]] = set()
    for finding in findings:
        path_positions = positions.get(finding["path"], set()) if positions is not None else None
        at_site = (finding["path"], finding["line"]) in sites  # it broke there: it ran
        if at_site or ran(finding, executed.get(finding["path"], set()), path_positions):
            ran_lines.add((finding["path"], finding["line"]))
    on_ran = [(key, rules) for key, rules in by_line.items() if key in ran_lines]
    true = sum(len(rules) for key, rules in on_ran if key in sites or key in spanned)
    recompile_claims = {(f["path"], f["line"], f["rule"]) for f in recompile_findings
                        if (f["path"], f["line"]) in recompiled or ran(
                            f, executed.get(f["path"], set()),
                            positions.get(f["path"], set()) if positions is not None else None)}
    true += sum(1 for path, line, _ in recompile_claims if (path, line) in recompiled)
    # The same for `error` findings alone: what a hook with `fail-on = "error"` blocks on.
    errors = {(f["path"], f["line"], f["rule"]) for f in findings if f["severity"] == "error"
              and (f["path"], f["line"]) in ran_lines}
    true_errors = sum(1 for path, line, _ in errors if (path, line) in sites or (path, line) in spanned)
    recompile_errors = {(f["path"], f["line"], f["rule"]) for f in recompile_findings
                        if f["severity"] == "error"} & recompile_claims
    errors |= recompile_errors
    true_errors += sum(1 for path, line, _ in recompile_errors if (path, line) in recompiled)
    false_alarms = {f"{path}:{line} {rule}": sorted(models_running(truth, path, line))
                    for (path, line), rules in on_ran if (path, line) not in sites and (path, line) not in spanned
                    for rule in sorted(rules)}
    false_alarms.update({f"{path}:{line} {rule}": sorted(models_running(truth, path, line))
                         for path, line, rule in sorted(recompile_claims) if (path, line) not in recompiled})
    found = {key for key in sites if key in by_line} | set(spanned.values())
    executed_lines = sum(len(lines) for lines in executed.values())
    on_executed = true + len(false_alarms)
    return {
        "version": truth["version"],
        "models": len(models),
        "skipped": len(truth["models"]) - len(models),
        "executed_lines": executed_lines,
        "sites": len(sites),
        "found": len(found),
        "recall": ratio(len(found), len(sites)),
        "findings": len(findings) + len(recompile_findings),
        "findings_on_executed": on_executed,
        "true": true,
        "false_alarms": len(false_alarms),
        "precision": ratio(true, on_executed),
        "errors_on_executed": len(errors),
        "true_errors": true_errors,
        "error_precision": ratio(true_errors, len(errors)),
        "false_alarms_per_kloc": round(1000 * len(false_alarms) / executed_lines, 3) if executed_lines else None,
        "false_alarm_sites": false_alarms,
        "recompiled_sites": {f"{path}:{line} `{site['guard']}`"
                             + (" (found)" if any((f["path"], f["line"]) == (path, line) for f in recompile_findings)
                                else ""): sorted(site["models"]) for (path, line), site in sorted(recompiled.items())},
        "found_sites": {site_key(key, sites[key]): sorted(sites[key]["models"]) for key in sorted(found)},
        "missed_sites": {site_key(key, sites[key]) + f" {sites[key]['reason']}": sorted(sites[key]["models"])
                         for key in sorted(set(sites) - found)},
    }


def models_running(truth: dict, path: str, line: int) -> set[str]:
    return {m["name"] for m in truth["models"]
            if m["status"] == "ok" and path in m["executed"] and line in parse_ranges(m["executed"][path])}


def site_key(key: tuple[str, int], site: dict) -> str:
    return f"{key[0]}:{key[1]} {','.join(sorted(site['gb_ids']))}"


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def totals(per_library: dict[str, dict]) -> dict:
    counts = ("models", "skipped", "executed_lines", "sites", "found", "findings", "findings_on_executed", "true",
              "false_alarms", "errors_on_executed", "true_errors")
    total = {key: sum(figures.get(key, 0) for figures in per_library.values()) for key in counts}
    total["recall"] = ratio(total["found"], total["sites"])
    total["precision"] = ratio(total["true"], total["findings_on_executed"])
    total["error_precision"] = ratio(total["true_errors"], total["errors_on_executed"])
    lines = total["executed_lines"]
    total["false_alarms_per_kloc"] = round(1000 * total["false_alarms"] / lines, 3) if lines else None
    return total


# the report --------------------------------------------------------------------------------------

COLUMNS = [("recall", "recall"), ("precision", "precision"), ("err. prec.", "error_precision"),
           ("FA/kloc", "false_alarms_per_kloc"),
           ("sites", "sites"), ("found", "found"), ("true", "true"), ("false al.", "false_alarms"),
           ("exec lines", "executed_lines"), ("findings", "findings"), ("models", "models"), ("skipped", "skipped")]


def table(rows: dict[str, dict]) -> str:
    header = f"{'library':<26}" + "".join(f"{title:>11}" for title, _ in COLUMNS)
    lines = [header, "─" * len(header)]
    for name, figures in rows.items():
        cells = "".join(f"{format_value(figures.get(key)):>11}" for _, key in COLUMNS)
        lines.append(f"{name:<26}{cells}")
    return "\n".join(lines)


def format_value(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


# For each figure, whether a higher value is better.
HIGHER_IS_BETTER = {"recall": True, "precision": True, "false_alarms_per_kloc": False, "found": True,
                    "false_alarms": False}


def diff(current: dict, baseline: dict) -> list[str]:
    lines = []
    for name, figures in current["libraries"].items():
        before = baseline.get("libraries", {}).get(name)
        if before is None:
            lines.append(f"{name}: new (no baseline figures)")
            continue
        changes = []
        for key, higher_better in HIGHER_IS_BETTER.items():
            old, new = before.get(key), figures.get(key)
            if old != new and old is not None and new is not None:
                better = (new > old) == higher_better
                changes.append(f"{key} {format_value(old)} -> {format_value(new)} ({'better' if better else 'worse'})")
        if before.get("version") != figures["version"]:
            changes.append(f"version {before.get('version')} -> {figures['version']}")
        lines.append(f"{name}: " + ("; ".join(changes) if changes else "unchanged"))
        alarms_now, alarms_before = set(figures["false_alarm_sites"]), set(before["false_alarm_sites"])
        found_now, found_before = set(figures["found_sites"]), set(before["found_sites"])
        lines += [f"  new false alarm    {key}" for key in sorted(alarms_now - alarms_before)]
        lines += [f"  fixed false alarm  {key}" for key in sorted(alarms_before - alarms_now)]
        lines += [f"  newly found site   {key}" for key in sorted(found_now - found_before)]
        lines += [f"  lost site          {key}" for key in sorted(found_before - found_now)]
    return lines


def listing(title: str, entries: dict[str, list[str]], top: int | None) -> list[str]:
    shown = list(entries.items())[:top] if top is not None else list(entries.items())
    lines = [f"  {title} ({len(entries)})"] + [f"    {key}   [{', '.join(models)}]" for key, models in shown]
    if len(shown) < len(entries):
        lines.append(f"    … {len(entries) - len(shown)} more in {DETAILS.relative_to(REPO)}")
    return lines


def run_score(venv: Path, libraries: list[Library], source: Path, save: bool, top: int) -> None:
    installed = installed_libraries(venv)
    check_pins(installed, libraries)
    truths = {library.name: load_truth(library) for library in libraries}
    per_library, lint_seconds = {}, {}
    for library in libraries:
        root = installed[library.name]["dir"]
        truth = truths[library.name]
        executed_files = {path for m in truth["models"] if m["status"] == "ok" for path in m["executed"]}
        started = time.perf_counter()
        findings = lint(root, lint_paths(root, library, executed_files), source, library.roots)
        lint_seconds[library.name] = time.perf_counter() - started
        per_library[library.name] = score(truth, findings)
    current = {"torch": installed["torch"]["version"], "libraries": per_library, "total": totals(per_library)}

    print(table({**per_library, "total": current["total"]}))
    print(f"\nlint: {sum(lint_seconds.values()):.0f} s ("
          + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in lint_seconds.items()) + ")")
    details = []
    for name, figures in per_library.items():
        details += [f"{name} {figures['version']}",
                    *listing("false alarms (file:line rule [models that ran the line])",
                             figures["false_alarm_sites"], None),
                    *listing("missed sites (file:line GB ids reason [models])", figures["missed_sites"], None),
                    *listing("recompiled on the later calls (file:line `guard`, (found): a BR finding there [models])",
                             figures["recompiled_sites"], None)]
    DETAILS.write_text("\n".join(details) + "\n", encoding="utf-8")
    print(f"\nfalse alarms and missed sites (first {top} of each; all in {DETAILS.relative_to(REPO)})")
    for name, figures in per_library.items():
        print(name)
        print("\n".join(listing("false alarms", figures["false_alarm_sites"], top)))
        print("\n".join(listing("missed sites", figures["missed_sites"], top)))

    if BASELINE.exists():
        baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
        print(f"\nagainst the baseline ({BASELINE.relative_to(REPO)})")
        print("\n".join(diff(current, baseline)))
    else:
        print(f"\nno baseline yet ({BASELINE.relative_to(REPO)}): --save writes one")
    if save:
        save_baseline(current)


def save_baseline(current: dict) -> None:
    """Write the figures as the baseline; a run of some libraries keeps the others' saved figures."""
    saved = json.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.exists() else {"libraries": {}}
    libraries = {**saved["libraries"], **current["libraries"]}
    merged = {"torch": current["torch"], "libraries": libraries, "total": totals(libraries)}
    BASELINE.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"saved the figures as the baseline: {BASELINE.relative_to(REPO)}")


# the command line --------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="score", choices=("setup", "truth", "score"))
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                        help=f"scratch venv (default {DEFAULT_VENV.relative_to(REPO)})")
    parser.add_argument("--library", action="append", choices=list(BY_NAME), help="only this library (repeatable)")
    parser.add_argument("--model", action="append", help="truth: only this model (repeatable; with one --library)")
    parser.add_argument("--jobs", type=int, default=2, help="model runs at once (truth; default 2)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per model run (truth; default 300)")
    parser.add_argument("--breakscan", type=Path, default=REPO,
                        help="score: the source tree whose breakscan lints, e.g. a `git worktree` of another commit "
                             "(default: this working tree)")
    parser.add_argument("--save", action="store_true", help="make these figures the baseline (score)")
    parser.add_argument("--top", type=int, default=10, help="false alarms and missed sites shown per library (score)")
    args = parser.parse_args()
    libraries = [BY_NAME[name] for name in args.library] if args.library else LIBRARIES
    if args.model and len(libraries) != 1:
        parser.error("--model needs exactly one --library")
    venv = args.venv.resolve()
    try:
        if args.command == "setup":
            setup(venv)
        elif args.command == "truth":
            generate_truth(venv, libraries, args.model, args.jobs, args.timeout)
        else:
            if not (args.breakscan / "breakscan" / "__main__.py").exists():
                raise SetupError(f"no breakscan source tree at {args.breakscan}")
            run_score(venv, libraries, args.breakscan.resolve(), args.save, args.top)
    except SetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
