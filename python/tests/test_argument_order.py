"""The torch ops pass their tensors in the order the compiled kernel names
its arguments (Kernel.arguments, from the C API), not in a list of their
own: a kernel whose arguments come in another order gets them in that
order, and a tensor the kernel does not take, or an argument no tensor
fills, is an error naming them."""
import pytest

torch = pytest.importorskip("torch")
from gdn import Compiler  # noqa: E402
from gdn.ops._custom_ops import _in_kernel_order  # noqa: E402


class _Named:
    """A kernel as _in_kernel_order sees it: its argument names, each a
    float32 [4] (gdnDType, shape, strides, offset, written)."""

    def __init__(self, *names):
        self.arguments = [(n, 0) for n in names]
        self._types = [(0, (4,), (1,), 0, n == "o") for n in names]


def test_tensors_follow_the_kernels_order():
    q, k, v, o = (torch.zeros(4) for _ in range(4))
    given = {"q": q, "k": k, "v": v, "o": o, "g": None}
    got = _in_kernel_order(_Named("o", "v", "q", "k"), given, "test")
    assert [id(t) for t in got] == [id(o), id(v), id(q), id(k)]


def test_a_mismatch_names_the_arguments():
    q, k, v, o = (torch.zeros(4) for _ in range(4))
    with pytest.raises(ValueError, match=r"missing \['beta'\]"):
        _in_kernel_order(_Named("q", "k", "v", "beta", "o"),
                         {"q": q, "k": k, "v": v, "o": o}, "test")
    with pytest.raises(ValueError, match=r"not taken \['g'\]"):
        _in_kernel_order(_Named("q", "k", "v", "o"),
                         {"q": q, "k": k, "v": v, "o": o, "g": q}, "test")


def test_a_real_kernel_names_its_in_place_state():
    # The C API names an in-place state "state": the dict key the op uses.
    kern = Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, decay="log_space",
                              beta="given", initial_state=True, final_state=True,
                              state_in_place=True, target="cpu")
    assert [n for n, _ in kern.arguments] == ["q", "k", "v", "g", "beta", "state", "o"]
