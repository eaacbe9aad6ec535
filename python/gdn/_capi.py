"""ctypes bindings of the C API in include/gdn-c/GDN.h (libGDNCAPI.so)."""
import ctypes
import os
from pathlib import Path

GDN_OK = 0
STATUS_NAMES = {
    1: "invalid argument",
    2: "compile error",
    3: "CUDA error",
    4: "no CUDA device",
    5: "unsupported",
}
TARGETS = {"cpu": 0, "cuda": 1}
# float8_e4m3fn: a state or intermediate dtype only, with its row scales
# (state_scale, intermediate_state_scale).
DTYPES = {"float32": 0, "bfloat16": 1, "float16": 2, "float8_e4m3fn": 5}
DECAY = {"none": 0, "log_space": 1, "fused_gating": 2}
BETA = {"one": 0, "given": 1, "logits": 2}
LAYOUTS = {"kv": 0, "vk": 1}


class GDNError(RuntimeError):
    """An error reported by the C API: `status` is the gdnStatus code."""

    def __init__(self, status, message):
        super().__init__(f"{STATUS_NAMES.get(status, status)}: {message}")
        self.status = status


class RecurrentDesc(ctypes.Structure):
    """gdnRecurrentDesc: a gdn.recurrent described without MLIR."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("abi_version", ctypes.c_uint32),
        ("N", ctypes.c_int64), ("T", ctypes.c_int64), ("H", ctypes.c_int64),
        ("HV", ctypes.c_int64), ("K", ctypes.c_int64), ("V", ctypes.c_int64),
        ("input_dtype", ctypes.c_int), ("gate_dtype", ctypes.c_int),
        ("beta_dtype", ctypes.c_int),
        ("decay", ctypes.c_int), ("beta", ctypes.c_int),
        ("qk_l2norm", ctypes.c_int), ("has_scale", ctypes.c_int), ("scale", ctypes.c_float),
        ("layout", ctypes.c_int), ("has_initial_state", ctypes.c_int),
        ("has_final_state", ctypes.c_int), ("state_in_place", ctypes.c_int),
        ("num_slots", ctypes.c_int64),
        ("state_index_bits", ctypes.c_int), ("state_dtype", ctypes.c_int),
        ("allow_neg_eigval", ctypes.c_int), ("cu_seqlens_bits", ctypes.c_int),
        ("intermediate_rows", ctypes.c_int64), ("intermediate_steps", ctypes.c_int64),
        ("intermediate_index_bits", ctypes.c_int), ("intermediate_dtype", ctypes.c_int),
        ("sm_count", ctypes.c_int),
        ("per_key_decay", ctypes.c_int), ("per_channel_beta", ctypes.c_int),
        ("parent_index_bits", ctypes.c_int),
        ("q_strides", ctypes.c_int64 * 4), ("k_strides", ctypes.c_int64 * 4),
        ("v_strides", ctypes.c_int64 * 4), ("gate_strides", ctypes.c_int64 * 4),
        ("beta_strides", ctypes.c_int64 * 4), ("state_slot_stride", ctypes.c_int64),
        ("intermediate_row_stride", ctypes.c_int64),
        ("schedule", ctypes.c_char_p),
        ("replay_steps", ctypes.c_int64),
        ("checkpoint_interval", ctypes.c_int64), ("checkpoint_rows", ctypes.c_int64),
        ("checkpoint_offset_bits", ctypes.c_int), ("checkpoint_dtype", ctypes.c_int),
        ("stochastic_rounding", ctypes.c_int),
    ]


# GDN_ABI_VERSION of the header these fields mirror (gdn-c/GDN.h).
ABI_VERSION = 7


def new_desc():
    """A zeroed RecurrentDesc with struct_size and abi_version set, as
    gdnRecurrentDescInit does in C."""
    d = RecurrentDesc()
    d.struct_size = ctypes.sizeof(RecurrentDesc)
    d.abi_version = ABI_VERSION
    return d


def _find_library():
    env = os.environ.get("GDN_LIBRARY")  # an explicit choice wins
    if env:
        return env
    here = Path(__file__).resolve().parent / "libGDNCAPI.so"
    if here.exists():
        return str(here)
    raise ImportError(
        "gdn: libGDNCAPI.so not found next to the package and GDN_LIBRARY is "
        "not set (build it with `ninja -C build GDNCAPI` or `pip install ./python`)")


_lib = ctypes.CDLL(_find_library())
_p = ctypes.c_void_p
_sigs = {
    "gdnVersion": (ctypes.c_char_p, []),
    "gdnGetLastError": (ctypes.c_char_p, []),
    "gdnChipForDevice": (ctypes.c_char_p, [ctypes.c_int, ctypes.c_int]),
    "gdnChooseVerifyMode": (ctypes.c_int, [ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                                           ctypes.c_int64, ctypes.c_double, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_int)]),
    "gdnCompilerCreate": (ctypes.c_int, [ctypes.POINTER(_p)]),
    "gdnCompilerDestroy": (None, [_p]),
    "gdnCompileText": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_p)]),
    "gdnCompileDesc": (ctypes.c_int, [_p, ctypes.POINTER(RecurrentDesc), ctypes.c_int,
                                      ctypes.c_char_p, ctypes.POINTER(_p)]),
    "gdnKernelNumArguments": (ctypes.c_int, [_p]),
    "gdnKernelArgumentName": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "gdnKernelArgumentBytes": (ctypes.c_int64, [_p, ctypes.c_int]),
    "gdnKernelArgumentDType": (ctypes.c_int, [_p, ctypes.c_int]),
    "gdnKernelArgumentRank": (ctypes.c_int, [_p, ctypes.c_int]),
    "gdnKernelArgumentDim": (ctypes.c_int64, [_p, ctypes.c_int, ctypes.c_int]),
    "gdnKernelArgumentStride": (ctypes.c_int64, [_p, ctypes.c_int, ctypes.c_int]),
    "gdnKernelArgumentOffset": (ctypes.c_int64, [_p, ctypes.c_int]),
    "gdnKernelArgumentWritten": (ctypes.c_int, [_p, ctypes.c_int]),
    "gdnKernelPTX": (ctypes.c_char_p, [_p]),
    "gdnKernelNumLaunches": (ctypes.c_int, [_p]),
    "gdnKernelLaunchName": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "gdnKernelLaunchPTX": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "gdnKernelLaunch": (ctypes.c_int, [_p, ctypes.POINTER(_p), ctypes.c_int, _p]),
    "gdnKernelRunHost": (ctypes.c_int, [_p, ctypes.POINTER(_p), ctypes.c_int]),
}
for _name, (_res, _args) in _sigs.items():
    _fn = getattr(_lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def check(status):
    if status != GDN_OK:
        raise GDNError(status, _lib.gdnGetLastError().decode(errors="replace"))


lib = _lib
