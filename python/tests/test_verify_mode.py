"""gdn.choose_verify_mode (gdnChooseVerifyMode): the cost model's choice
between replay and snapshots for a speculative round, checked against the
committed H200 measurements it was made from
(bench/results/replay/bench_replay.json, every point timed both ways in one
run): the chosen scheme is within 6 % of the faster one at every point,
where always replaying loses up to 35 %."""
import json
import math
from pathlib import Path

import pytest

import gdn

MEASURED = Path(__file__).resolve().parents[2] / "bench" / "results" / "replay" / \
    "bench_replay.json"


def losses(choose):
    """time(chosen) / time(faster) at every measured point."""
    rows = json.loads(MEASURED.read_text())
    assert len(rows) >= 192, "the measurements are incomplete"
    out = []
    for r in rows:
        times = {"replay": r["gdn_replay"], "snapshots": r["gdn_snapshot"]}
        mode = choose(r)
        out.append((times[mode] / min(times.values()), r))
    return out


def test_the_choice_is_within_six_percent_of_the_faster_scheme_everywhere():
    got = losses(lambda r: gdn.choose_verify_mode(r["state_dtype"], r["T"], r["N"],
                                                  r["layers"], r["accepted"]))
    worst, at = max(got, key=lambda x: x[0])
    assert worst <= 1.06, f"loses {worst:.3f}x at {at}"
    assert sum(x for x, _ in got) / len(got) <= 1.005
    # The rule matters: either scheme alone loses far more somewhere.
    for fixed in ("replay", "snapshots"):
        assert max(x for x, _ in losses(lambda r: fixed)) > 1.3, fixed


def test_rules():
    f = gdn.choose_verify_mode
    assert f("float32", 4, 64, 48, 4) == "replay"          # many rows: fewer bytes
    assert f("bfloat16", 12, 1, 1, 12) == "snapshots"      # one row, one layer
    assert f("float32", 4, 1, 1, 0) == "replay"            # ... that accepts nothing
    assert f("bfloat16", 8, 8, 1, 4) == "snapshots"        # few 16-bit rows accepting much
    assert f("bfloat16", 8, 8, 48, 4) == "replay"
    assert f("float32", 4, 256, 1, 2, tree=True) == "snapshots"  # a tree stores its parents
    # Past 256 draft tokens a replay is refused on the GPU (its steps unrolled).
    assert f("float32", 256, 64, 48, 4) == "replay"
    assert f("float32", 257, 64, 48, 4) == "snapshots"
    assert f("float16", 4, 1, 1) == f("bfloat16", 4, 1, 1)  # T / 2 by default


def test_torch_dtypes_are_accepted():
    torch = pytest.importorskip("torch")
    assert gdn.choose_verify_mode(torch.bfloat16, 4, 1, 1, 4) == "snapshots"


@pytest.mark.parametrize("args,error,match", [
    (("int8", 4, 1), ValueError, "state_dtype must be one of"),
    (("float32", 0, 1), ValueError, "T must be >= 1, got 0"),
    (("float32", 4, 0), ValueError, "N must be >= 1, got 0"),
    (("float32", 4, 1, 0), ValueError, "layers must be >= 1, got 0"),
    (("float32", 4, 1, 1, 5), ValueError, r"expected_accepted must be in \[0, T = 4\], got 5"),
    (("float32", 4, 1, 1, -1), ValueError, "expected_accepted must be in"),
    (("float32", 4, 1, 1, math.nan), ValueError, "expected_accepted must be in"),
    (("float32", 4.0, 1), TypeError, "T must be an int"),
    (("float32", 4, 1, 1, "2"), TypeError, "expected_accepted must be a number"),
])
def test_bad_arguments_name_themselves(args, error, match):
    with pytest.raises(error, match=match):
        gdn.choose_verify_mode(*args)


def test_the_c_api_refuses_a_null_result_pointer():
    from gdn._capi import lib
    assert lib.gdnChooseVerifyMode(0, 4, 1, 1, 1.0, 0, None) == 1  # GDN_ERROR_INVALID_ARGUMENT
    assert "mode is NULL" in lib.gdnGetLastError().decode()
