"""The catalogue of what TorchDynamo breaks on (breakscan/lint/data/catalogue.json, written by
`python bench/catalogue.py --write`): its shape, its lookups, and a sample of it probed again
under the installed TorchDynamo, which must agree with what is stored."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib

import pytest

from breakscan.lint import catalogue
from tests.helpers import ROOT

CATEGORIES = {"tensor-method", "tensor-attribute", "tensor-operator", "torch", "functional", "builtin", "stdlib",
              "numpy", "thirdparty", "construct"}
RESULTS = {"tensor", "int", "float", "bool", "size", "tuple", "list", "dict", "none", "str", "ndarray", "other",
           "error", "unknown"}
# (key, call, config): tensor methods, an operator, builtins, stdlib, numpy, constructs and a config variant.
SAMPLE = [
    ("torch.Tensor.item", "s.item()", "default"),
    ("torch.Tensor.item", "s.item()", "capture_scalar_outputs = True"),
    ("torch.Tensor.size", "x.size(0)", "default"),
    ("torch.Tensor.tolist", "x.tolist()", "default"),
    ("torch.Tensor.__getitem__", "x[m]", "default"),
    ("builtins.print", "print(x)", "default"),
    ("builtins.len", "len(x)", "default"),
    ("math.sqrt", "math.sqrt(s)", "default"),
    ("random.random", "random.random()", "default"),
    ("numpy.sqrt", "np.sqrt(x.shape[0])", "default"),
    ("construct:class-in-compiled", "a class defined inside the compiled function", "default"),
    ("construct:generator-function", "a generator function (yield) consumed in compiled code", "default"),
]


def stored(key: str, call: str, config: str) -> catalogue.Entry:
    return next(e for e in catalogue.entries(key, config=config) if e.call == call)


def test_the_data_loads_with_its_torch_version():
    data = catalogue.load()
    assert data.torch.startswith("2.13"), "regenerate with `python bench/catalogue.py --write` for this torch"
    assert len(data.entries) > 1000 and data.not_probed
    assert {e.category for e in data.entries} == CATEGORIES
    for entry in data.entries:
        assert entry.result in RESULTS, entry
        assert entry.breaks == bool(entry.gb_ids), entry
        first, last = entry.lines
        assert 1 <= first <= last <= entry.source.count("\n"), entry
        assert "def probe(" in entry.source and entry.inputs.startswith("(")


def test_every_tensor_method_is_probed_or_says_why():
    methods = {e.key for e in catalogue.load().entries if e.category in ("tensor-method", "tensor-attribute")}
    skipped = {key for category, key, _ in catalogue.load().not_probed if category.startswith("tensor")}
    assert not methods & skipped
    assert {"torch.Tensor.item", "torch.Tensor.size", "torch.Tensor.shape"} <= methods
    assert catalogue.not_probed("torch.Tensor.set_")


def test_lookups_answer_with_results_and_breaks():
    assert catalogue.tensor_method("item").breaks and catalogue.tensor_method("item").gb_ids == ("GB0124",)
    assert not catalogue.tensor_method("item", config="capture_scalar_outputs = True").breaks
    assert catalogue.tensor_method("size").result == "size"
    assert [e.result for e in catalogue.entries("torch.Tensor.size")] == ["size", "int"]
    assert catalogue.tensor_method("dim").result == "int"
    assert catalogue.tensor_method("shape").result == "size"
    assert catalogue.call("builtins.print").breaks
    assert catalogue.call("builtins.len", args="tensor").result == "int"
    assert catalogue.call("math.sqrt", args="tensor").breaks
    assert not catalogue.call("math.sqrt", args="python").breaks
    assert catalogue.call("torch.nn.functional.relu").result == "tensor"
    assert catalogue.construct("tensor-if").breaks
    assert catalogue.call("no.such.function") is None and catalogue.tensor_method("no_such_method") is None


def test_the_data_file_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "data/*.json" in config["tool"]["setuptools"]["package-data"]["breakscan.lint"]


@pytest.mark.slow
def test_reading_the_catalogue_does_not_import_torch():
    code = "import sys; from breakscan.lint import catalogue; catalogue.load(); print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip() == "False"


def bench_catalogue():
    spec = importlib.util.spec_from_file_location("bench_catalogue", ROOT / "bench" / "catalogue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_sample_probed_again_agrees_with_the_stored_data():
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith(catalogue.torch_version()[:4]):
        pytest.skip(f"the catalogue is for torch {catalogue.torch_version()}, this is {torch.__version__}")
    bench = bench_catalogue()
    entries = [stored(*identity) for identity in SAMPLE]
    probes = [bench.Probe(e.key, e.category, e.call, e.args, e.source, e.inputs, e.lines, e.config) for e in entries]
    fresh = bench.run_probes(probes)  # one batch
    for entry, again in zip(entries, fresh):
        assert again["status"] == entry.status, (entry.call, again.get("error"))
        assert (again["breaks"], tuple(again["gb_ids"]), again["result"], again["items"]) == (
            entry.breaks, entry.gb_ids, entry.result, entry.items), entry.call


def _classes_reading_the_mode() -> set[str]:
    """torch.nn's public module classes whose code reads `self.training` (outside `train`/`eval`
    and construction), or whose `__init__` builds one that does, read from the installed sources."""
    import ast
    from pathlib import Path

    torch = pytest.importorskip("torch")
    nn = torch.nn
    reads, builds = set(), {}
    for source in sorted((Path(torch.__file__).parent / "nn" / "modules").glob("*.py")):
        for node in ast.parse(source.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef)]
            if node.name != "Module" and any(
                    isinstance(n, ast.Attribute) and n.attr == "training" and isinstance(n.value, ast.Name)
                    and n.value.id == "self"
                    for m in methods if m.name not in ("train", "eval", "__init__", "__setstate__", "extra_repr")
                    for n in ast.walk(m)):
                reads.add(node.name)
            builds[node.name] = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr
                                 for m in methods if m.name == "__init__" for n in ast.walk(m)
                                 if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
    public = {name: cls for name in dir(nn) if isinstance(cls := getattr(nn, name), type) and issubclass(cls, nn.Module)}

    def depends(name: str, seen: tuple[str, ...] = ()) -> bool:
        lineage = [k.__name__ for k in public[name].__mro__] if name in public else [name]
        return any(k in reads for k in lineage) or any(
            built in public and built not in seen and depends(built, (*seen, name))
            for k in lineage for built in builds.get(k, ()))

    return {name for name in public if depends(name)}


def test_the_modules_whose_code_reads_the_training_mode_match_the_installed_torch():
    from breakscan.lint.rules.recompiles.mode_switch import TRAINING_DEPENDENT_MODULES

    assert TRAINING_DEPENDENT_MODULES == _classes_reading_the_mode()


def test_the_numpy_modules_and_names_dynamo_traces_match_the_installed_torch():
    pytest.importorskip("torch")
    from torch._dynamo.trace_rules import _numpy_function_ids
    from torch._dynamo.utils import NP_SUPPORTED_MODULES

    from breakscan.lint.semantics.untraceable import NUMPY_TRACED_MODULES, NUMPY_UNTRACED_NAMES

    assert NUMPY_TRACED_MODULES == {module.__name__ for module in NP_SUPPORTED_MODULES}
    traced = _numpy_function_ids()
    assert NUMPY_UNTRACED_NAMES == {f"{module.__name__}.{name}" for module in NP_SUPPORTED_MODULES
                                    for name, member in vars(module).items()
                                    if callable(member) and not name.startswith("_") and id(member) not in traced}


def test_the_numpy_functions_without_a_torch_counterpart_are_those_of_the_installed_torch():
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith(catalogue.torch_version()[:4]):
        pytest.skip(f"the catalogue is for torch {catalogue.torch_version()}, this is {torch.__version__}")
    from torch._dynamo.trace_rules import _numpy_function_ids
    from torch._dynamo.utils import NP_SUPPORTED_MODULES
    from torch._dynamo.variables.misc import get_np_to_tnp_map

    wrapped, traced = _numpy_function_ids(), get_np_to_tnp_map()
    missing = catalogue.load().numpy_without_torch_equivalent
    assert {"numpy.interp", "numpy.isin", "numpy.random.permutation"} <= missing
    assert not {"numpy.histogram", "numpy.sqrt", "numpy.cumsum"} & missing
    assert missing == {f"{module.__name__}.{name}" for module in NP_SUPPORTED_MODULES
                       for name, member in vars(module).items()
                       if not name.startswith("_") and id(member) in wrapped and member not in traced}


def test_torchs_declared_results_answer_for_functions_and_methods_it_did_not_probe():
    assert catalogue.declared_result("torch.is_autocast_cpu_enabled") == "bool"
    assert catalogue.declared_result("torch.get_autocast_dtype") == "other"
    assert catalogue.declared_result("torch.Tensor.is_contiguous") == "bool"
    assert catalogue.declared_result("torch.Tensor.unbind") == "tensors"
    assert catalogue.declared_result("torch.nn.functional.max_pool2d_with_indices") == "tensors"
    assert catalogue.declared_result("torch.Tensor.item") is None  # a Number: int, float or bool
    assert catalogue.declared_result("torch.Tensor.size") is None  # overloads disagree: Size, int
    assert catalogue.declared_result("torch.nn.functional._canonical_mask") is None  # not public


def bench_torch_returns():
    spec = importlib.util.spec_from_file_location("bench_torch_returns", ROOT / "bench" / "torch_returns.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_declared_annotations_read_as_kinds():
    kind_of = bench_torch_returns().kind_of
    assert [kind_of(text) for text in ("_bool", "Tensor", "tuple[Tensor, ...]", "torch.return_types.max",
                                       "_int | SymInt", "Optional[Tensor]", "Union[Tensor, _float]",
                                       "tuple[Tensor, _int]", "torch.device", "Any")] == [
        "bool", "tensor", "tensors", "tensors", "int", None, None, "tuple", "other", None]


@pytest.mark.slow
def test_the_declared_results_are_those_of_the_installed_torch():
    torch = pytest.importorskip("torch")
    data = json.loads((ROOT / "breakscan" / "lint" / "data" / "torch_returns.json").read_text())
    if torch.__version__.split(".")[:2] != data["torch"].split(".")[:2]:  # CI and the README install 2.13
        pytest.skip(f"the data is for torch {data['torch']}, this is {torch.__version__}")
    fresh = bench_torch_returns().collect()
    assert fresh["entries"] == data["entries"], "regenerate with `python bench/torch_returns.py --write`"
    assert fresh["result_fields"] == data["result_fields"], "regenerate with `python bench/torch_returns.py --write`"
    assert fresh["module_tensors"] == data["module_tensors"], "regenerate with `python bench/torch_returns.py --write`"


def test_torch_nn_classes_answer_with_the_tensors_they_register():
    assert catalogue.module_tensor("torch.nn.BatchNorm1d", "num_batches_tracked") == "tensor"
    assert catalogue.module_tensor("torch.nn.modules.batchnorm.BatchNorm2d", "running_mean") == "tensor"
    assert catalogue.module_tensor("torch.nn.InstanceNorm2d", "running_mean") == "optional"  # not tracked by default
    assert catalogue.module_tensor("torch.nn.Linear", "in_features") is None
    assert catalogue.module_tensor("mylib.Linear", "weight") is None
