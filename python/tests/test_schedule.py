"""The GPU schedule travels as one #gdn.schedule attribute through every
layer (the C API, Python, gdn-run): each layer accepts every parameter the
attribute defines (read here from its ODS definition, GDNAttrs.td) without a
list of its own, and refuses a name the attribute does not have."""
import os
import re
import subprocess

import pytest

import gdn
from gdn.schedule import schedule_text

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
TD = os.path.join(ROOT, "include", "gdn", "Dialect", "GDN", "IR", "GDNAttrs.td")
# A decode the GPU lowering takes under the cost model (PTX only: no GPU).
DECODE = dict(N=8, T=1, H=16, HV=32, K=128, V=128, input_dtype="bfloat16", layout="vk",
              initial_state=True, final_state=True, state_in_place=True, target="cuda")
NOT_A_SCHEDULE = "is not a #gdn.schedule"
# What the attribute's parser says of a parameter or case it does not have.
UNKNOWN = ("unknown struct parameter name", "to be one of")


def parameters():
    """(name, values to try) of every #gdn.schedule parameter in the ODS
    definition: sizes 1 and 0, an enum every case of its enum."""
    td = open(TD).read()
    body = td[td.index("def GDN_ScheduleAttr"):]
    body = body[body.index("let parameters = (ins"):]
    body = body[:body.index(");")]
    enums = {}
    for name, cases in re.findall(r'def GDN_(\w+) : I32EnumAttr<"\w+",.*?\[(.*?)\]', td, re.S):
        enums[name + "Attr"] = re.findall(r'I32EnumAttrCase<"(\w+)"', cases)
    out = []
    for first, name in re.findall(r'^\s*\w+<"([^"]*)".*:\$(\w+)', body, re.M):
        out.append((name, enums[first] if first in enums else [1, 0]))
    return out


def test_the_definition_has_the_parameters():
    names = [n for n, _ in parameters()]
    assert len(names) == len(set(names)) >= 12
    assert {"columns_per_lane", "solve", "launch"} <= set(names)


@pytest.mark.parametrize("name,values", parameters())
def test_python_and_the_c_api_accept_every_parameter(name, values):
    """Each value reaches the compiler: a kernel, or a diagnostic saying why
    it is out of range or this kernel cannot take it, never a refusal of the
    parameter or the case; at least one value gives a kernel."""
    c = gdn.Compiler()
    compiled = 0
    for value in values:
        try:
            c.compile(schedule={name: value}, **DECODE)
            compiled += 1
        except gdn.GDNError as e:
            assert not any(u in str(e) for u in UNKNOWN), str(e)
    assert compiled >= 1


def test_unknown_parameters_and_cases_are_refused():
    """What the tests above rely on: the parser names an unknown parameter
    and case; a value out of range and text that is no attribute are
    refused too."""
    c = gdn.Compiler()
    for bad, why in (({"rows_per_warp": 2}, UNKNOWN[0]), ({"solve": "tensor_core"}, UNKNOWN[1])):
        with pytest.raises(gdn.GDNError, match=why):
            c.compile(schedule=bad, **DECODE)
    for bad in ({"rows_per_warp": 2}, {"solve": "tensor_core"}, {"warps": 0},
                "#gdn.schedule<warps = 2", "{warps = 2}"):
        with pytest.raises(gdn.GDNError, match=NOT_A_SCHEDULE):
            c.compile(schedule=bad, **DECODE)


def test_schedule_text():
    assert schedule_text(None) == schedule_text({}) == ""
    assert schedule_text({"columns_per_lane": 2, "solve": "tensor_cores"}) == \
        "#gdn.schedule<columns_per_lane = 2, solve = tensor_cores>"
    assert schedule_text("#gdn.schedule<warps = 1>") == "#gdn.schedule<warps = 1>"
    with pytest.raises(ValueError, match="not an identifier"):
        schedule_text({"warps = 1>} {x": 1})
    with pytest.raises(ValueError, match="not an enum case"):
        schedule_text({"solve": "tensor_cores> {"})
    with pytest.raises(TypeError, match="must be an int or an enum case"):
        schedule_text({"warps": True})
    with pytest.raises(TypeError, match="schedule must be None"):
        schedule_text([("warps", 1)])


def gdn_run():
    """gdn-run beside the library under test (build/bin next to build/lib)."""
    lib = os.environ.get("GDN_LIBRARY", "")
    path = os.path.join(os.path.dirname(lib), "..", "bin", "gdn-run")
    return path if lib and os.path.exists(path) else None


@pytest.mark.skipif(gdn_run() is None, reason="gdn-run is not beside GDN_LIBRARY")
@pytest.mark.parametrize("name,values", parameters())
def test_gdn_run_accepts_every_parameter(name, values):
    example = os.path.join(ROOT, "examples", "sglang_pool_decode_bf16.mlir")
    compiled = 0
    for value in values:
        r = subprocess.run([gdn_run(), "--emit=ptx",
                            f"--schedule=#gdn.schedule<{name} = {value}>", example],
                           capture_output=True, text=True, timeout=300)
        assert not any(u in r.stderr for u in UNKNOWN), r.stderr
        compiled += r.returncode == 0
    assert compiled >= 1
