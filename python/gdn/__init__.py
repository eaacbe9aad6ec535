"""gdn-mlir: Gated Delta Rule kernels compiled by MLIR.

`Compiler` compiles a gdn.recurrent (MLIR text, or keyword arguments that
describe it) or a gdn.commit or gdn.replay_commit (MLIR text, `compile_text`)
for the CPU or for CUDA; `Kernel.run_host` runs a CPU kernel on numpy arrays,
`Kernel.launch` a CUDA kernel on device pointers and a stream.
The PyTorch entry points (FLA, SGLang and FlashInfer signatures) live in
`gdn.ops` (importing it needs torch).
"""
import ctypes
import math
import numbers
import operator
import threading

from ._capi import (BETA, DECAY, DTYPES, LAYOUTS, TARGETS, GDNError,
                    RecurrentDesc, check, lib, new_desc)
from .schedule import schedule_text

__all__ = ["Compiler", "Kernel", "GDNError", "version", "default_compiler",
           "choose_verify_mode"]


def version():
    """The version of the loaded libGDNCAPI.so."""
    return lib.gdnVersion().decode()


def choose_verify_mode(state_dtype, T, N, layers=1, expected_accepted=None, tree=False):
    """The speculative-verify scheme gdn's cost model expects to be faster
    for one round (gdnChooseVerifyMode; docs/cost-model.md, "Replay or
    snapshots"; measured on sm_90a): "replay" (verify with the replay
    windows, then one replay_commit for all layers) or "snapshots" (verify
    storing the state after every draft token, then commit_accepted a
    layer). state_dtype: the pool's, "float32", "bfloat16" or "float16" (or
    the torch dtype); T draft tokens a row, N rows, layers a round (ints
    >= 1); expected_accepted: the mean accepted tokens a row, 0 <= it <= T
    (None: T / 2); tree: an EAGLE tree. Raises ValueError naming the
    argument (GDNError's message) for anything else."""
    name = str(state_dtype).removeprefix("torch.")
    dtype = _lookup(DTYPES, name, "state_dtype")
    for arg, value in (("T", T), ("N", N), ("layers", layers)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"{arg} must be an int, got {type(value).__name__}")
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError(f"{arg} = {value} does not fit int64")
    accepted = T / 2 if expected_accepted is None else expected_accepted
    if not isinstance(accepted, numbers.Real) or isinstance(accepted, bool):
        raise TypeError(f"expected_accepted must be a number, got {type(accepted).__name__}")
    try:
        accepted = float(accepted)
    except OverflowError:
        raise ValueError(f"expected_accepted = {accepted} does not fit a double") from None
    mode = ctypes.c_int()
    status = lib.gdnChooseVerifyMode(dtype, int(T), int(N), int(layers), accepted,
                                     int(bool(tree)), ctypes.byref(mode))
    if status != 0:
        raise ValueError(lib.gdnGetLastError().decode(errors="replace"))
    return "replay" if mode.value == 1 else "snapshots"


# numpy dtype names accepted for each element type (gdnDType order; numpy
# has no bfloat16: ml_dtypes' one, or the raw bits as uint16).
_NUMPY_DTYPES = [("float32",), ("bfloat16", "uint16"), ("float16",), ("int32",), ("int64",),
                 ("float8_e4m3fn", "uint8")]
_DTYPE_NAMES = ["float32", "bfloat16", "float16", "int32", "int64", "float8_e4m3fn"]


def _dense_strides(shape):
    """Row-major strides, in elements, of `shape`."""
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= d
    return tuple(reversed(strides))


def _argument_tables(handle):
    """(arguments, types) of a kernel handle: per argument (role name, size
    in bytes), and (gdnDType, shape, strides in elements, offset in
    elements, written) as the kernel was compiled; tuples, shared by every
    Kernel of the handle."""
    n = lib.gdnKernelNumArguments(handle)
    arguments = tuple((lib.gdnKernelArgumentName(handle, i).decode(),
                       lib.gdnKernelArgumentBytes(handle, i)) for i in range(n))
    types = []
    for i in range(n):
        dims = range(lib.gdnKernelArgumentRank(handle, i))
        types.append((lib.gdnKernelArgumentDType(handle, i),
                      tuple(lib.gdnKernelArgumentDim(handle, i, d) for d in dims),
                      tuple(lib.gdnKernelArgumentStride(handle, i, d) for d in dims),
                      lib.gdnKernelArgumentOffset(handle, i),
                      lib.gdnKernelArgumentWritten(handle, i) == 1))
    return arguments, tuple(types)


class Kernel:
    """A compiled gdn.recurrent or gdn.commit. Its arguments are described by
    `arguments`: (role name, size in bytes) in the order the kernel takes
    them."""

    def __init__(self, handle, compiler, target, tables=None):
        self._h = handle
        self._compiler = compiler  # kernels live as long as their compiler
        self.target = target
        # (arguments, types) read once a handle (Compiler._tables): some 150
        # C calls, most of a warm compile's time otherwise.
        self.arguments, self._types = tables or _argument_tables(handle)
        self._argtype = ctypes.c_void_p * len(self.arguments)

    @property
    def ptx(self):
        """The PTX text of the first launch (CUDA kernels; `launches` has
        every launch's), else None."""
        p = lib.gdnKernelPTX(self._h)
        return p.decode() if p else None

    @property
    def launches(self):
        """The kernel launches `launch_raw` makes, in order, as (entry name,
        PTX of its module) (CUDA kernels; [] when it launches nothing), else
        None."""
        n = lib.gdnKernelNumLaunches(self._h)
        if n < 0:
            return None
        return [(lib.gdnKernelLaunchName(self._h, i).decode(),
                 lib.gdnKernelLaunchPTX(self._h, i).decode()) for i in range(n)]

    def _pointers(self, buffers, nbytes_of):
        if len(buffers) != len(self.arguments):
            raise ValueError(f"expected {len(self.arguments)} arguments "
                             f"({', '.join(n for n, _ in self.arguments)}), got {len(buffers)}")
        ptrs = []
        for (name, nbytes), buf in zip(self.arguments, buffers):
            ptr, size = nbytes_of(name, buf)
            if size != nbytes:
                raise ValueError(f"argument '{name}' has {size} bytes, expected {nbytes}")
            ptrs.append(ptr)
        return self._argtype(*ptrs)

    def run_host(self, arrays):
        """Runs a CPU kernel on numpy arrays (in argument order); the outputs
        (the arguments the kernel writes: o, state, final_state,
        intermediate_states, state_checkpoints, the replay windows, the e4m3
        scales) are written in place and must be writeable. Each
        array must have the argument's dtype in native byte order (float32,
        float16, int32, int64; bfloat16: ml_dtypes.bfloat16 or its bits as
        uint16). An argument compiled dense takes a C-contiguous array of its
        size in bytes, of its shape when it has more than one dimension (flat
        1-D arrays are accepted); one compiled as a view (strides given)
        takes an array of its shape and strides, e.g. a numpy view of a
        packed array, whose element [0, ...] is the view's (a static offset
        is the caller's: the kernel is given the address offset elements
        before it). Else TypeError (dtype) or ValueError naming the
        argument; the kernel never reinterprets an array. An output that
        shares memory with another argument (numpy.shares_memory) is a
        ValueError naming both: the kernel would read its own writes."""
        types, sizes = iter(self._types), iter(self.arguments)

        def host(name, a):
            if not all(hasattr(a, x) for x in ("__array_interface__", "flags", "ctypes")):
                raise TypeError(f"argument '{name}' must be a numpy array, got "
                                f"{type(a).__name__}")
            dtype, shape, strides, offset, written = next(types)
            nbytes = next(sizes)[1]
            if a.dtype.name not in _NUMPY_DTYPES[dtype] or not a.dtype.isnative:
                raise TypeError(f"argument '{name}' must have dtype {_DTYPE_NAMES[dtype]} "
                                f"({' or '.join(_NUMPY_DTYPES[dtype])}, native byte order), "
                                f"got {a.dtype.str} ({a.dtype.name})")
            if strides != _dense_strides(shape) or offset:
                if written and not a.flags["WRITEABLE"]:
                    raise ValueError(f"argument '{name}' must be writeable")
                got = tuple(s // a.itemsize for s in a.strides)
                if (tuple(a.shape) != shape or any(
                        n != 1 and (g != w or s % a.itemsize)
                        for n, g, w, s in zip(shape, got, strides, a.strides))):
                    raise ValueError(f"argument '{name}' must have shape {list(shape)} and "
                                     f"strides {list(strides)} (elements), got shape "
                                     f"{list(a.shape)} and strides {list(got)}")
                # The kernel takes the base, offset elements before the
                # view's element [0, ...], and spans nbytes from it.
                return a.ctypes.data - offset * a.itemsize, nbytes

            if not a.flags["C_CONTIGUOUS"]:
                raise ValueError(f"argument '{name}' must be C-contiguous")
            if written and not a.flags["WRITEABLE"]:
                raise ValueError(f"argument '{name}' must be writeable")
            if a.ndim > 1 and tuple(a.shape) != shape:
                raise ValueError(f"argument '{name}' must have shape {list(shape)} (or be "
                                 f"flat), got {list(a.shape)}")
            return a.ctypes.data, a.nbytes
        pointers = self._pointers(arrays, host)
        import numpy as np  # the arrays' own library

        written = [t[4] for t in self._types]
        for i, (name, _) in enumerate(self.arguments):
            for j, (other, _) in enumerate(self.arguments):
                if (written[i] and j != i and not (j < i and written[j])
                        and np.shares_memory(arrays[i], arrays[j])):
                    raise ValueError(f"argument '{name}', which the kernel writes, shares "
                                     f"memory with argument '{other}'; give each its own "
                                     "array")
        check(lib.gdnKernelRunHost(self._h, pointers, len(arrays)))

    def launch(self, pointers, stream=0):
        """Launches a CUDA kernel: `pointers` are device addresses (ints, in
        argument order, sizes as in `arguments`), `stream` a CUstream handle."""
        if len(pointers) != len(self.arguments):
            raise ValueError(f"expected {len(self.arguments)} pointers, got {len(pointers)}")
        args = self._argtype(*pointers)
        check(lib.gdnKernelLaunch(self._h, args, len(pointers), ctypes.c_void_p(stream)))

    def launch_raw(self, args, stream):
        """Launch with a prepared ctypes pointer array (the fast path of gdn.ops)."""
        check(lib.gdnKernelLaunch(self._h, args, len(args), stream))


_FIELD_BITS = {name: 8 * ctypes.sizeof(t) for name, t in RecurrentDesc._fields_}


def _c_str(name, text):
    """`text` encoded for a C string argument; a NUL character would end it
    early on the C side (the rest silently dropped): ValueError naming it."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    if "\0" in text:
        raise ValueError(f"{name} must not contain a NUL character (at {text.index(chr(0))})")
    return text.encode()


def _set_int(desc, name, value):
    """desc.name = int(value), or ValueError if it does not fit the C field
    (ctypes would silently keep only the low bits); a bool is a TypeError
    (checkpoint_interval=True is no interval of 1 token)."""
    bits = _FIELD_BITS[name]
    try:
        v = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        v = None
    if v is None:
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise ValueError(f"{name} = {v} does not fit the C API's {bits}-bit field")
    setattr(desc, name, v)


class Compiler:
    """A gdn compiler: an MLIR context plus an in-memory and on-disk kernel
    cache. Thread-safe."""

    def __init__(self):
        h = ctypes.c_void_p()
        check(lib.gdnCompilerCreate(ctypes.byref(h)))
        self._h = h
        # The argument tables of each handle: a cache hit returns the same
        # handle (the compiler owns its kernels until it is destroyed), so a
        # warm compile is the C API's lookup and the descriptor's checks.
        # Tables, not Kernels: a Kernel holds its compiler, and a cycle
        # would leave the compiler (its MLIR context) to the cyclic GC.
        self._tables = {}
        self._tables_lock = threading.Lock()

    def _kernel(self, handle, target):
        with self._tables_lock:
            tables = self._tables.get(handle.value)
            if tables is None:
                tables = self._tables[handle.value] = _argument_tables(handle)
        return Kernel(handle, self, target, tables)

    # The destroy function is bound when the class is defined: at interpreter
    # exit the module's globals (lib) may already be None when a Compiler
    # still alive is collected.
    def __del__(self, _destroy=lib.gdnCompilerDestroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None

    def compile_text(self, mlir, function=None, target="cpu", chip=None):
        """Compiles the function holding a gdn.recurrent, a gdn.commit or a
        gdn.replay_commit of MLIR text `mlir`."""
        k = ctypes.c_void_p()
        check(lib.gdnCompileText(self._h, _c_str("mlir", mlir),
                                 _c_str("function", function) if function else None,
                                 _target(target), _c_str("chip", chip) if chip else None,
                                 ctypes.byref(k)))
        return self._kernel(k, target)

    def compile(self, *, N, T, H, HV, K, V, input_dtype="bfloat16",
                gate_dtype="float32", beta_dtype=None, decay="none", beta="one", qk_l2norm=False,
                scale=None, layout="kv", initial_state=False, final_state=False,
                state_in_place=False, num_slots=0, state_index_dtype="int32",
                state_dtype="float32", allow_neg_eigval=False, cu_seqlens_dtype=None,
                intermediate_rows=0, intermediate_steps=0, intermediate_index_dtype=None,
                intermediate_dtype="float32", parent_index_dtype=None,
                per_key_decay=False, per_channel_beta=False,
                schedule=None, sm_count=0, q_strides=None, k_strides=None, v_strides=None,
                gate_strides=None, beta_strides=None, state_slot_stride=0,
                intermediate_row_stride=0, replay_steps=0, checkpoint_interval=0,
                checkpoint_rows=0, checkpoint_offset_dtype=None, checkpoint_dtype="float32",
                stochastic_rounding=False, target="cpu", chip=None):
        """Compiles a gdn.recurrent described by keywords (see gdnRecurrentDesc
        in gdn-c/GDN.h for the argument order of the kernel). dtypes:
        "float32", "bfloat16", "float16" (gate_dtype: g or a; beta_dtype: beta
        or b, default gate_dtype); decay: "none", "log_space",
        "fused_gating"; beta: "one", "given", "logits"; layout: "kv", "vk".
        Boolean fields (qk_l2norm, initial_state, final_state, state_in_place,
        allow_neg_eigval, per_key_decay, per_channel_beta) take a bool, a
        numpy bool or 0/1, else TypeError naming the field. A field that
        only matters with another, set (to other than its default) without
        it, is a ValueError naming both: intermediate_steps,
        intermediate_index_dtype, intermediate_dtype, parent_index_dtype
        without intermediate_rows > 0; state_index_dtype without num_slots;
        state_dtype without a state; gate_dtype and per_key_decay without a
        decay; beta_dtype and per_channel_beta without beta;
        allow_neg_eigval without beta "logits"; state_slot_stride without a
        state; intermediate_row_stride without intermediate_rows > 0;
        gate_strides without a decay; beta_strides without beta. scale: None is K^-0.5, any
        other finite real is used as given (0 gives o = 0); NaN and inf are
        a ValueError.
        per_key_decay (KDA): the decay is per key channel, g or a
        [N, T, HV, K] and, with fused gating, dt_bias [HV * K] (A_log [HV]);
        per_channel_beta: beta or b per value channel, [N, T, HV, V].
        intermediate_rows > 0 (verify): the state after every token goes to an
        intermediate_states argument [rows, steps, HV, ...] of intermediate_dtype,
        row n or, with intermediate_index_dtype, an intermediate_state_indices
        argument [N] (< 0: no row). parent_index_dtype ("int32"/"int64", with
        intermediate_rows): EAGLE tree verify, a retrieve_parent_token
        argument [N, intermediate_steps] naming each step's parent step.
        cu_seqlens_dtype ("int32"/"int64"): varlen, N sequences packed into T
        tokens ([1, T, ...] token tensors, a cu_seqlens [N + 1] argument).
        state_dtype: storage of the states (computed in float32, rounded once
        on store). num_slots > 0 makes the states a pool [num_slots, HV, ...] addressed by
        a state_indices argument [N] of state_index_dtype ("int32", "int64");
        an index < 0 is a padding row (no state touched, outputs zero).
        schedule pins parameters of the GPU schedule (the rest: the cost
        model's): None, the text of a #gdn.schedule<...> attribute, or a dict
        of its parameters, e.g. {"columns_per_lane": 2, "reductions":
        "in_turn"} (gdn.schedule.schedule_text; docs/schedule.md lists the
        parameters, among them launch = "programmatic*": a kernel for
        programmatic dependent launch, which Kernel.launch starts with
        programmatic stream serialization). A text that is not a
        #gdn.schedule is gdn.Error with the parser's message, a schedule the
        kernel cannot take gdn.Error with the reason.
        sm_count: multiprocessors of the target device for the cost model
        (0: the chip's largest part).
        Views (strides in elements, outermost first; None: dense): q_strides,
        k_strides, v_strides (4 each), gate_strides and beta_strides (3 per
        head, 4 per channel) for operands that are views, e.g. of a fused
        projection; state_slot_stride / intermediate_row_stride (0: dense)
        for pools and buffers whose slots or rows are views of a larger
        record. The op's rules apply (docs/DESIGN.md, "Strided operands"); the
        kernel's pointer is the address of element [0, ...].
        replay_steps > 0 (replayed verify): the kernel also takes the replay
        windows k_window [rows, H, L, K], v_window [rows, HV, L, V] (both
        input_dtype), g_window and beta_window [rows, HV, L] (float32), dense,
        after intermediate_states, with L = replay_steps and rows = num_slots
        with a pool, else N: row state_indices[n] (or n) receives the first L
        tokens' raw k and v, log decay and beta (gdn.replay_commit replays
        them).
        checkpoint_interval > 0 tokens (prefix-cache checkpoints, FlashInfer's
        checkpoint_every_n_tokens): the kernel also takes checkpoint_offsets
        [N + 1] (checkpoint_offset_dtype "int32" or "int64", required) after
        the index tables and state_checkpoints [checkpoint_rows >= 1, HV, ...]
        in the state layout, dense, in checkpoint_dtype ("float32",
        "bfloat16", "float16", or "float8_e4m3fn", then followed by
        checkpoint_scale [checkpoint_rows, HV, V] float32, a stored row's
        scale, docs/math.md §6), after the replay windows: sequence n stores
        the state after its ((j + 1) * checkpoint_interval)-th token in row
        offsets[n] + j while that row is below offsets[n + 1], never a row
        outside [0, checkpoint_rows) (both offsets are clamped to
        [0, checkpoint_rows] first: a negative offsets[n] counts from row
        0); padding rows write none. GPU kernels
        that stage tokens need an interval that is a multiple of their
        staged_tokens (64 always is). checkpoint_rows, checkpoint_offset_dtype
        or checkpoint_dtype without checkpoint_interval > 0 are a ValueError
        naming them. stochastic_rounding (needs a "float8_e4m3fn" final
        state, intermediate_dtype or checkpoint_dtype): every e4m3 store rounds to one of its
        two neighbours, unbiased on average (docs/math.md §6); without one
        of them, GDNError with the verifier's message."""
        flags = dict(qk_l2norm=qk_l2norm, initial_state=initial_state, final_state=final_state,
                     state_in_place=state_in_place, allow_neg_eigval=allow_neg_eigval,
                     per_key_decay=per_key_decay, per_channel_beta=per_channel_beta,
                     stochastic_rounding=stochastic_rounding)
        flags = {name: _flag(name, value) for name, value in flags.items()}
        d = new_desc()
        ints = dict(N=N, T=T, H=H, HV=HV, K=K, V=V, sm_count=sm_count, num_slots=num_slots,
                    intermediate_rows=intermediate_rows, intermediate_steps=intermediate_steps,
                    replay_steps=replay_steps, checkpoint_interval=checkpoint_interval,
                    checkpoint_rows=checkpoint_rows)
        ints.update(state_slot_stride=state_slot_stride,
                    intermediate_row_stride=intermediate_row_stride)
        for name, value in ints.items():
            _set_int(d, name, value)
        for name, strides in dict(q_strides=q_strides, k_strides=k_strides,
                                  v_strides=v_strides, gate_strides=gate_strides,
                                  beta_strides=beta_strides).items():
            if strides is None:
                continue
            counts = (4,) if name in ("q_strides", "k_strides", "v_strides") else (3, 4)
            if len(strides) not in counts:
                raise ValueError(f"{name} has {len(strides)} entries, not "
                                 f"{' or '.join(map(str, counts))} (one a dimension of its "
                                 "operand)")
            field = getattr(d, name)
            for i, x in enumerate(strides):
                if not -(1 << 63) <= operator.index(x) < (1 << 63):
                    raise ValueError(f"{name}[{i}] = {x} does not fit int64")
                field[i] = x
        d.input_dtype = _lookup(DTYPES, input_dtype, "input_dtype")
        d.gate_dtype = _lookup(DTYPES, gate_dtype, "gate_dtype")
        d.beta_dtype = _lookup(DTYPES, beta_dtype or gate_dtype, "beta_dtype")
        d.decay = _lookup(DECAY, decay, "decay")
        d.beta = _lookup(BETA, beta, "beta")
        d.qk_l2norm = flags["qk_l2norm"]
        if scale is not None:
            d.has_scale, d.scale = 1, _check_scale(scale)
        d.layout = _lookup(LAYOUTS, layout, "layout")
        schedule = schedule_text(schedule)
        d.schedule = _c_str("schedule", schedule) if schedule else None
        d.has_initial_state = flags["initial_state"]
        d.has_final_state = flags["final_state"]
        d.state_in_place = flags["state_in_place"]
        d.state_dtype = _lookup(DTYPES, state_dtype, "state_dtype")
        d.allow_neg_eigval = flags["allow_neg_eigval"]
        d.per_key_decay = flags["per_key_decay"]
        d.per_channel_beta = flags["per_channel_beta"]
        d.stochastic_rounding = flags["stochastic_rounding"]
        d.intermediate_index_bits = {None: 0, "int32": 32, "int64": 64}.get(
            intermediate_index_dtype, -1)
        if d.intermediate_index_bits < 0:
            raise ValueError("intermediate_index_dtype must be None, 'int32' or 'int64'")
        d.intermediate_dtype = _lookup(DTYPES, intermediate_dtype, "intermediate_dtype")
        d.parent_index_bits = {None: 0, "int32": 32, "int64": 64}.get(parent_index_dtype, -1)
        if d.parent_index_bits < 0:
            raise ValueError("parent_index_dtype must be None, 'int32' or 'int64'")
        d.cu_seqlens_bits = {None: 0, "int32": 32, "int64": 64}.get(cu_seqlens_dtype, -1)
        if d.cu_seqlens_bits < 0:
            raise ValueError(f"cu_seqlens_dtype must be None, 'int32' or 'int64', got {cu_seqlens_dtype!r}")
        _check_checkpoint_fields(checkpoint_interval, checkpoint_rows, checkpoint_offset_dtype,
                                 checkpoint_dtype)
        d.checkpoint_offset_bits = {None: 0, "int32": 32, "int64": 64}[checkpoint_offset_dtype]
        d.checkpoint_dtype = _lookup(DTYPES, checkpoint_dtype, "checkpoint_dtype")
        d.state_index_bits = {"int32": 32, "int64": 64}.get(state_index_dtype, 0)
        if num_slots and not d.state_index_bits:
            raise ValueError(f"state_index_dtype must be 'int32' or 'int64', got {state_index_dtype!r}")
        _check_dependent_fields(
            flags, decay=decay, beta=beta, gate_dtype=gate_dtype, beta_dtype=beta_dtype,
            num_slots=num_slots, state_index_dtype=state_index_dtype, state_dtype=state_dtype,
            intermediate_rows=intermediate_rows, intermediate_steps=intermediate_steps,
            intermediate_index_dtype=intermediate_index_dtype,
            intermediate_dtype=intermediate_dtype, parent_index_dtype=parent_index_dtype,
            state_slot_stride=state_slot_stride, intermediate_row_stride=intermediate_row_stride,
            gate_strides=gate_strides, beta_strides=beta_strides)
        k = ctypes.c_void_p()
        check(lib.gdnCompileDesc(self._h, ctypes.byref(d), _target(target),
                                 _c_str("chip", chip) if chip else None, ctypes.byref(k)))
        return self._kernel(k, target)


_FLOAT32_MAX = 3.4028234663852886e38


def _check_scale(scale):
    """`scale` (a real number, not None) as a float: the C field is a
    float32, so NaN, inf and values past float32's range (they would become
    inf) are a ValueError naming scale, a non-number a TypeError."""
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number or None, got {type(scale).__name__}")
    try:
        value = float(scale)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:
        raise ValueError(f"scale must be finite, within float32's range (None: K^-0.5), "
                         f"got {scale}")
    return value


def _flag(name, value):
    """A boolean field as 0/1: bool, a numpy bool or the integers 0 and 1
    (bool('False') would be True); anything else is a TypeError naming it."""
    if isinstance(value, bool):
        return int(value)
    if getattr(getattr(value, "dtype", None), "kind", None) == "b" and \
            getattr(value, "ndim", None) == 0:  # a numpy bool
        return int(bool(value))
    if not isinstance(value, float):
        try:
            v = operator.index(value)
        except TypeError:
            v = None
        if v in (0, 1):
            return v
    raise TypeError(f"{name} must be a bool (or 0/1), got {value!r}")


def _check_checkpoint_fields(interval, rows, offset_dtype, dtype):
    """The checkpoint fields: with checkpoint_interval > 0, checkpoint_rows
    >= 1, checkpoint_offset_dtype "int32"/"int64" and a float
    checkpoint_dtype; without, none of them set (a ValueError naming the
    field: it would be silently ignored)."""
    if offset_dtype not in (None, "int32", "int64"):
        raise ValueError(f"checkpoint_offset_dtype must be None, 'int32' or 'int64', "
                         f"got {offset_dtype!r}")
    if dtype not in ("float32", "bfloat16", "float16", "float8_e4m3fn"):
        raise ValueError(f"checkpoint_dtype must be 'float32', 'bfloat16', 'float16' or "
                         f"'float8_e4m3fn', got {dtype!r}")
    if interval < 0:
        raise ValueError(f"checkpoint_interval must be >= 0 tokens (0: no checkpoints), "
                         f"got {interval}")
    if interval == 0:
        for field, value, default in (("checkpoint_rows", rows, 0),
                                      ("checkpoint_offset_dtype", offset_dtype, None),
                                      ("checkpoint_dtype", dtype, "float32")):
            if value != default:
                raise ValueError(f"{field} = {value!r} needs checkpoint_interval > 0")
        return
    if rows < 1:
        raise ValueError(f"checkpoint_rows must be >= 1 with checkpoint_interval > 0, "
                         f"got {rows}")
    if offset_dtype is None:
        raise ValueError("checkpoint_interval > 0 needs checkpoint_offset_dtype "
                         "('int32' or 'int64')")


def _check_dependent_fields(flags, *, decay, beta, gate_dtype, beta_dtype, num_slots,
                            state_index_dtype, state_dtype, intermediate_rows,
                            intermediate_steps, intermediate_index_dtype, intermediate_dtype,
                            parent_index_dtype, state_slot_stride=0, intermediate_row_stride=0,
                            gate_strides=None, beta_strides=None):
    """A field that only matters with another one, given (not its default)
    without it, is a ValueError naming both: it would be silently ignored."""
    def needs(given, field, what):
        if given:
            raise ValueError(f"{field} needs {what}")

    rows = intermediate_rows > 0
    needs(intermediate_index_dtype is not None and not rows,
          f"intermediate_index_dtype = {intermediate_index_dtype!r}", "intermediate_rows > 0")
    needs(parent_index_dtype is not None and not rows,
          f"parent_index_dtype = {parent_index_dtype!r}", "intermediate_rows > 0")
    needs(intermediate_dtype != "float32" and not rows,
          f"intermediate_dtype = {intermediate_dtype!r}", "intermediate_rows > 0")
    needs(intermediate_steps != 0 and not rows,
          f"intermediate_steps = {intermediate_steps!r}", "intermediate_rows > 0")
    needs(state_index_dtype != "int32" and not num_slots,
          f"state_index_dtype = {state_index_dtype!r}", "num_slots > 0 (a pool)")
    needs(state_dtype != "float32" and not (flags["initial_state"] or flags["final_state"]),
          f"state_dtype = {state_dtype!r}", "initial_state or final_state")
    needs(gate_dtype != "float32" and decay == "none",
          f"gate_dtype = {gate_dtype!r}", "decay 'log_space' or 'fused_gating' (decay = 'none')")
    needs(beta_dtype is not None and beta == "one",
          f"beta_dtype = {beta_dtype!r}", "beta 'given' or 'logits' (beta = 'one')")
    needs(flags["allow_neg_eigval"] and beta != "logits",
          "allow_neg_eigval", f"beta = 'logits' (beta = 2 sigmoid(b)), got beta = {beta!r}")
    needs(flags["per_key_decay"] and decay == "none",
          "per_key_decay", "decay 'log_space' or 'fused_gating' (decay = 'none')")
    needs(flags["per_channel_beta"] and beta == "one",
          "per_channel_beta", "beta 'given' or 'logits' (beta = 'one')")
    needs(state_slot_stride != 0 and not (flags["initial_state"] or flags["final_state"]),
          f"state_slot_stride = {state_slot_stride!r}", "initial_state or final_state")
    needs(intermediate_row_stride != 0 and not rows,
          f"intermediate_row_stride = {intermediate_row_stride!r}", "intermediate_rows > 0")
    needs(gate_strides is not None and decay == "none",
          "gate_strides", "decay 'log_space' or 'fused_gating' (decay = 'none')")
    needs(beta_strides is not None and beta == "one",
          "beta_strides", "beta 'given' or 'logits' (beta = 'one')")


def _lookup(table, key, what):
    try:
        return table[key]
    except KeyError:
        raise ValueError(f"{what} must be one of {sorted(table)}, got {key!r}") from None


def _target(target):
    return _lookup(TARGETS, target, "target")


_default = None


def default_compiler():
    """The process-wide compiler used by gdn.ops."""
    global _default
    if _default is None:
        _default = Compiler()
    return _default
