"""Every rule's examples, run under the installed TorchDynamo in one batch.

INVALID examples must break exactly on their `# break` lines, each with one of the rule's GB ids;
VALID examples must not break at all (but for the lines marked `# break (another rule)`: a break
the example needs, such as the one that makes the code after it run eagerly). A recompile rule's examples make several calls (their inputs
are a list of calls): INVALID ones recompile exactly for the values of their `# recompile` lines,
VALID ones do not recompile; neither breaks but where marked `# break (another rule)`. A rule whose examples fail here predicts something
TorchDynamo 2.13 does not do.
"""

import pytest

pytest.importorskip("torch")

from breakscan.confirm import run_targets  # noqa: E402
from breakscan.lint.rules import all_rules  # noqa: E402
from breakscan.model import TargetSpec  # noqa: E402
from tests.confirm.helpers import once_per_session  # noqa: E402

CASES = [(rule, kind, index, example) for rule in all_rules()
         for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
         for index, example in enumerate(examples)]
IDS = [f"{rule.id}-{kind}-{index}" for rule, kind, index, _ in CASES]


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    def run_all_examples():
        folder = tmp_path_factory.mktemp("calibration")
        specs = []
        for case_id, (_, _, _, example) in zip(IDS, CASES):
            path = folder / f"{case_id.replace('-', '_')}.py"
            path.write_text(example.source)
            specs.append(TargetSpec(str(path), example.entry, example.inputs, name=case_id,
                                    compiles_itself=not example.compiled))
        return run_targets(specs, device="cpu", timeout=120)

    # One batch for the whole session, even when pytest-xdist splits the tests across workers.
    return dict(zip(IDS, once_per_session(request, tmp_path_factory, "calibration", run_all_examples)))


@pytest.mark.parametrize("rule,kind,index,example", CASES, ids=IDS)
def test_example_against_dynamo(results, rule, kind, index, example):
    result = results[f"{rule.id}-{kind}-{index}"]
    assert result.status == "ok", result.error
    seen = {(b.line, b.gb_id) for b in result.breaks}
    if rule.kind == "recompile":
        # several calls, or a loop; breaks only where another rule predicts one (the break whose result recompiles)
        assert {line for line, _ in seen} == set(example.other_break_lines) and (result.calls > 1 or not example.compiled)
        expected = set(example.recompile_lines) if kind == "invalid" else set()
        assert {r.line for r in result.recompiles} == expected, result.recompiles
        return
    others = set(example.other_break_lines)  # breaks another rule predicts, which the example needs
    if kind == "valid":
        assert {line for line, _ in seen} == others, "a VALID example breaks under TorchDynamo"
        return
    assert {line for line, _ in seen} == set(example.break_lines) | others
    for line in example.break_lines:
        assert any(gb in rule.gb_ids for seen_line, gb in seen if seen_line == line), (line, seen, rule.gb_ids)
