"""The torch custom ops `gdn::recurrent`, `gdn::commit` and
`gdn::replay_commit` (torch.library, fake implementations included so
torch.compile can trace them) on validated tensors (dense, or views the kernels read in place:
_checks._view_strides); their caches of compiled kernels, and
`set_schedule`, the GPU schedule of the kernels compiled afterwards. The
entry points (fla, sglang, flashinfer, accepted, replay) check their
arguments and call these ops through torch.ops.gdn."""
import ctypes
from typing import Optional

import torch

from .. import default_compiler
from .._capi import lib
from ..schedule import schedule_text
from ._checks import _read_apart, _view_strides

_DTYPES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16",
           torch.float8_e4m3fn: "float8_e4m3fn"}
_kernels = {}
_schedule = {}


def _type_name(table, t, name, op="recurrent"):
    """table[t.dtype] (_DTYPES: the C API's dtype names; _MLIR_TYPES: MLIR
    element types); TypeError naming argument `name` of gdn::`op` for a
    dtype the table lacks (float64, an integer type...)."""
    if t.dtype not in table:
        raise TypeError(f"gdn::{op}: argument '{name}' in {t.dtype} is not supported "
                        f"(one of {', '.join(str(d) for d in table)})")
    return table[t.dtype]


def _dtype_of(name, t):
    return _type_name(_DTYPES, t, name)


def set_schedule(schedule=None, **parameters):
    """Pins parameters of the GPU schedule of the kernels compiled from now
    on: a dict and/or keywords of #gdn.schedule parameters
    (gdn.schedule.schedule_text, docs/schedule.md), e.g.
    set_schedule(columns_per_lane=2, reductions="in_turn");
    set_schedule() leaves every parameter to the cost model again. Used by
    the benchmarks to sweep schedules. A schedule that is not a dict, or a
    name or value schedule_text refuses, is a TypeError / ValueError naming
    it, and the pins in force stay as they were."""
    if schedule is not None and not isinstance(schedule, dict):
        raise TypeError(f"set_schedule takes a dict of #gdn.schedule parameters and/or "
                        f"keywords, got {type(schedule).__name__} (a #gdn.schedule<...> "
                        f"text goes to Compiler.compile's schedule)")
    pins = {**(schedule or {}), **parameters}
    schedule_text(pins)  # checks every name and value's form before any change
    _schedule.clear()
    _schedule.update(pins)


def _chip(device):
    """The chip gdn builds for on `device` (the C API's table of chips:
    sm_90a for compute capability 9.0); an unsupported device's own name,
    which the compiler then refuses listing the supported ones."""
    major, minor = torch.cuda.get_device_capability(device)
    chip = lib.gdnChipForDevice(major, minor)
    return chip.decode() if chip else f"sm_{major}{minor}"


def _kernel(device, fresh_early_inputs=False, **desc):
    schedule = dict(_schedule)
    if fresh_early_inputs:  # written by the kernel just before: no early read
        schedule.pop("launch", None)
    if schedule:
        desc["schedule"] = schedule_text(schedule)
    key = (device.type, device.index) + tuple(sorted(desc.items()))
    k = _kernels.get(key)
    if k is None:
        target = "cuda" if device.type == "cuda" else "cpu"
        chip = _chip(device) if target == "cuda" else None
        if target == "cuda":  # the cost model scales with the device's SMs
            desc.setdefault("sm_count",
                            torch.cuda.get_device_properties(device).multi_processor_count)
        k = default_compiler().compile(target=target, chip=chip, **desc)
        _kernels[key] = k
    return k


def _check_scales(what, pairs):
    """ValueError naming the scale unless each (scale name, scale, buffer
    names, buffers) of `pairs` has its scale exactly when one of its
    buffers is float8_e4m3fn: row scales go with an e4m3 buffer, and only
    with one."""
    for scale_name, scale, names, buffers in pairs:
        given = [(n, t) for n, t in zip(names, buffers) if t is not None]
        if any(t.dtype == torch.float8_e4m3fn for _, t in given) != (scale is not None):
            got = ", ".join(f"{n} in {t.dtype}" for n, t in given) or "none of them"
            raise ValueError(
                f"{what}: {scale_name} goes with a float8_e4m3fn {' or '.join(names)}, and only "
                f"with one; got {got} and {scale_name} {'given' if scale is not None else 'None'}")


# The arguments with a token dimension (dimension 1 of [B, T, ...]).
_TOKEN_ARGUMENTS = frozenset(("q", "k", "v", "g", "a", "beta", "b", "o"))


def _in_kernel_order(kern, given, what, tokens=None):
    """The tensors of `given` (role name -> tensor or None) in the order of
    the kernel's arguments, which the kernel names (Kernel.arguments, the C
    API's gdnKernelArgumentName): every argument must be given, and every
    tensor given must be an argument; each on the GPU 16-byte aligned.
    tokens: a varlen kernel compiled for a token capacity
    (_prefill_capacity) takes token tensors [1, tokens, ...] of this many
    tokens, no more than the capacity."""
    names = [name for name, _ in kern.arguments]
    extra = sorted(n for n, t in given.items() if t is not None and n not in names)
    missing = [n for n in names if given.get(n) is None]
    if extra or missing:  # tensors given without the ones they go with
        raise ValueError(f"{what}: the arguments given make a kernel that takes "
                         f"({', '.join(names)}): missing {missing}, not taken {extra}")
    for name, (dtype, shape, strides, _, _) in zip(names, kern._types):
        t = given[name]
        if t.is_cuda and t.data_ptr() % 16 != 0:  # 16-byte vector loads and stores
            raise ValueError(f"{name} must be 16-byte aligned (data_ptr % 16 == 0)")
        if tokens is not None and name in _TOKEN_ARGUMENTS and tokens <= shape[1]:
            shape = (shape[0], tokens) + shape[2:]
        _check_layout(what, name, t, dtype, shape, strides)
    return [given[name] for name in names]


# gdnDType -> torch dtype (gdnKernelArgumentDType).
_TORCH_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64,
                 torch.float8_e4m3fn]


def _check_layout(what, name, t, dtype, shape, strides):
    """Tensor t must be what the kernel addresses as argument `name`: its
    dtype, shape and (on every dimension that is stepped) its strides. The
    kernel takes a bare pointer, so anything else would be read or written
    out of place or out of bounds (e.g. a pool's row scales viewed with a
    slot pitch, or a tensor of another shape passed to torch.ops.gdn
    directly): a ValueError naming the argument. (The usual case, the same
    shape and strides, is two tuple comparisons.)"""
    if t.dtype == _TORCH_DTYPES[dtype] and t.shape == shape and t.stride() == strides:
        return
    got = tuple(t.shape)
    if (t.dtype != _TORCH_DTYPES[dtype] or got != shape or
            (t.numel() and any(n != 1 and s != w
                               for n, s, w in zip(got, t.stride(), strides)))):
        raise ValueError(
            f"{what}: argument '{name}' must be a {_TORCH_DTYPES[dtype]} tensor of shape "
            f"{list(shape)} and strides {list(strides)} (elements) as the kernel addresses it, "
            f"got {t.dtype}, shape {list(got)} and strides {list(t.stride())}")


def _launch(kern, given, what, device, tokens=None):
    """Launches `kern` on `given` (argument name -> tensor or None) on the
    current stream of `device` (CUDA) or runs it on the host (CPU)."""
    tensors = _in_kernel_order(kern, given, what, tokens)
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    if device.type == "cuda":
        kern.launch_raw(ptrs, ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream))
    else:
        from .._capi import check, lib
        check(lib.gdnKernelRunHost(kern._h, ptrs, len(tensors)))


def _token_capacity(T):
    """The token count a varlen prefill kernel is compiled for: T rounded up
    to the next quarter octave (8, 10, 12, 14, 16, 20, ..., 64, 80, 96,
    112, 128, 160, ...; at most 25 % above T), T itself below 8. No floor:
    the cost model classes a varlen batch by its tokens a sequence
    (docs/cost-model.md#varlen-prefill), which a floor of 64 would inflate
    for a few short sequences (3 tokens in 2 sequences then took the
    tensor-core prefill form)."""
    if T < 8:
        return T
    step = 1 << (T.bit_length() - 3)
    return -(-T // step) * step


def _row_capacity(N):
    """The sequence count a pool prefill kernel is compiled for: the next
    power of two."""
    return 1 << (N - 1).bit_length() if N > 1 else N


def _prefill_capacity(T, N, cu_seqlens, state_indices, rows_tables):
    """Varlen prefills compile for a capacity, not their exact shape: T
    rounded up to a quarter octave (at most 25 % more) and, with a pool
    (state_indices), N to a power of two, so that a server's batches of
    every length share a few dozen kernels instead of compiling one (50 to
    150 ms) per batch (docs/DESIGN.md, "Token capacity"). The kernel then
    sees [1, T', ...] token tensors of which only the T given are read: the
    caller's cu_seqlens, clamped to [.., T] on the device (one small kernel,
    so that no contract-breaking entry makes the kernel read or write past
    the T tokens), bound every sequence; rows N..N'-1 are padding
    (cu_seqlens repeats its last entry, the index tables hold -1). Only
    prefills: varlen calls with more tokens than sequences and no per-token
    states (a verify's and a decode's shapes are few; their extra launches
    would cost more than they save). rows_tables: {name: table [N, ...]}
    of the pool's other row tables (padded with -1) and checkpoint_offsets
    ([N + 1], padded with its last entry). Returns (T', N', cu_seqlens,
    state_indices, rows_tables), unchanged where not a prefill."""
    if cu_seqlens is None or T <= N or T == 0:
        return T, N, cu_seqlens, state_indices, rows_tables
    cu_seqlens = torch.clamp(cu_seqlens, max=T)
    N_cap = _row_capacity(N) if state_indices is not None else N
    pad = N_cap - N
    if pad:
        cu_seqlens = torch.cat([cu_seqlens, cu_seqlens[-1:].expand(pad)])
        state_indices = torch.cat([state_indices, state_indices.new_full((pad,), -1)])
        for name, t in list(rows_tables.items()):
            if t is None:
                continue
            if name == "checkpoint_offsets":
                rows_tables[name] = torch.cat([t, t[-1:].expand(pad)])
            else:
                rows_tables[name] = torch.cat([t, t.new_full((pad,) + tuple(t.shape[1:]), -1)])
    return _token_capacity(T), N_cap, cu_seqlens, state_indices, rows_tables


@torch.library.custom_op("gdn::recurrent",
                         mutates_args=("state", "intermediate_states", "final_state", "o",
                                       "k_window", "v_window", "g_window", "beta_window",
                                       "state_scale", "state_checkpoints",
                                       "intermediate_state_scale", "checkpoint_scale"))
def recurrent(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              g: Optional[torch.Tensor], a: Optional[torch.Tensor],
              A_log: Optional[torch.Tensor], dt_bias: Optional[torch.Tensor],
              beta: Optional[torch.Tensor], b: Optional[torch.Tensor],
              state_indices: Optional[torch.Tensor], cu_seqlens: Optional[torch.Tensor],
              intermediate_state_indices: Optional[torch.Tensor],
              initial_state: Optional[torch.Tensor], state: Optional[torch.Tensor],
              intermediate_states: Optional[torch.Tensor],
              final_state: Optional[torch.Tensor], o: torch.Tensor,
              k_window: Optional[torch.Tensor], v_window: Optional[torch.Tensor],
              g_window: Optional[torch.Tensor], beta_window: Optional[torch.Tensor],
              state_scale: Optional[torch.Tensor],
              checkpoint_offsets: Optional[torch.Tensor],
              state_checkpoints: Optional[torch.Tensor],
              intermediate_state_scale: Optional[torch.Tensor],
              checkpoint_scale: Optional[torch.Tensor],
              scale: Optional[float], qk_l2norm: bool, state_layout: str,
              allow_neg_eigval: bool = False,
              retrieve_parent_token: Optional[torch.Tensor] = None,
              fresh_early_inputs: bool = False, checkpoint_interval: int = 0,
              stochastic_rounding: bool = False) -> None:
    """The gdn.recurrent op on validated tensors: dense, or views the
    kernels read in place (_checks._view_strides: q, k, v, the gates; the
    states and intermediate_states with a slot pitch). `state` is an
    initial state updated in place; `initial_state` (read) and `final_state`
    (written) are separate buffers. A read-only argument whose bytes a
    written one may reach is read from a copy taken before the launch; two
    written arguments whose bytes overlap: ValueError naming both
    (_checks._read_apart). With cu_seqlens [N + 1], state_indices is [N]
    and checkpoint_offsets [N + 1] (ValueError naming them otherwise).
    With `state_indices` [N] (int32/int64) the states are pools
    [slots, HV, ...] and row n uses slot
    state_indices[n]; an index < 0 is a padding row (no slot touched, o rows
    zero). o [N, T, HV, V] is written. `retrieve_parent_token` [N, steps]
    (int32/int64, with intermediate_states): EAGLE tree verify, each step
    starts from its parent step's stored state (see the op's description).
    Replayed verify: k_window [rows, H, L, K], v_window [rows, HV, L, V] (q's
    dtype), g_window, beta_window [rows, HV, L] (float32), all four or none,
    dense, rows = the pool's slots (N without a pool): the first L tokens of
    sequence n go to row state_indices[n] (or n) as raw k, v, log decay and
    beta, for gdn::replay_commit. A float8_e4m3fn state (a pool or per-row
    states, updated in place or only read or only written) comes with
    state_scale [rows, HV, V] float32, its row scales (read, and written
    with the state: docs/math.md §6); float8_e4m3fn intermediate_states
    come with intermediate_state_scale [rows, steps, HV, V] float32 (a
    scale a stored row, written with it). Prefix-cache checkpoints (FlashInfer's
    state_checkpoints / checkpoint_cu_starts / checkpoint_every_n_tokens):
    checkpoint_interval > 0 tokens with checkpoint_offsets [N + 1]
    (int32/int64) and state_checkpoints [C >= 1, HV, ...] in the state
    layout (float32, bfloat16 or float16, dense, written; or
    float8_e4m3fn with checkpoint_scale [C, HV, V] float32, its rows'
    scales, written with it): sequence n stores
    the state after its ((j + 1) * checkpoint_interval)-th token in row
    lo + j while that row is below hi, lo = clamp(offsets[n], 0, C) and
    hi = clamp(offsets[n + 1], lo, C) (offsets[n] + j for offsets in
    [0, C]; no row outside [0, C) is written; padding rows write none);
    checkpoint_interval 0 with both None: none. (Every mutated argument comes before the
    first one with a default: torch drops trailing default arguments before
    its ADInplaceOrView kernel, which indexes the mutated ones by position.)
    fresh_early_inputs: the caller has just written the initial state or an
    index table with a kernel of its own (a dtype conversion, an arange), so
    this call is never a programmatic launch (set_schedule), whose kernel
    reads those before waiting for the previous kernel.
    stochastic_rounding: the float8_e4m3fn state or intermediate_states
    written are rounded stochastically (docs/math.md §6; the op's
    attribute), GDNError from the compiler where nothing is."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"gdn::recurrent: argument '{name}' must be 4-D [N, T, heads, "
                             f"dim], got {t.dim()}-D")
    if state_indices is not None and all(t is None for t in (state, initial_state, final_state)):
        raise ValueError("gdn::recurrent: state_indices addresses a pool: it needs state, "
                         "initial_state or final_state")
    # Aliasing (_read_apart): a read-only argument that shares bytes with a
    # written one is read from a copy; written ones must not share bytes.
    copies = _read_apart("gdn::recurrent", dict(
        q=q, k=k, v=v, g=g, a=a, A_log=A_log, dt_bias=dt_bias, beta=beta, b=b,
        state_indices=state_indices, cu_seqlens=cu_seqlens,
        intermediate_state_indices=intermediate_state_indices, initial_state=initial_state,
        checkpoint_offsets=checkpoint_offsets, retrieve_parent_token=retrieve_parent_token),
        dict(state=state, intermediate_states=intermediate_states, final_state=final_state,
             o=o, k_window=k_window, v_window=v_window, g_window=g_window,
             beta_window=beta_window, state_scale=state_scale,
             state_checkpoints=state_checkpoints,
             intermediate_state_scale=intermediate_state_scale,
             checkpoint_scale=checkpoint_scale))
    if copies:  # written just now by a kernel of the caller's stream
        fresh_early_inputs = True
        (q, k, v, g, a, A_log, dt_bias, beta, b, state_indices, cu_seqlens,
         intermediate_state_indices, initial_state, checkpoint_offsets,
         retrieve_parent_token) = copies.values()
    N, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    tokens = None
    if cu_seqlens is not None:  # varlen: N sequences packed into [1, T, ...]
        if cu_seqlens.dim() != 1 or cu_seqlens.shape[0] < 1:
            raise ValueError(f"gdn::recurrent: argument 'cu_seqlens' must be 1-D [N + 1], "
                             f"got shape {list(cu_seqlens.shape)}")
        N = cu_seqlens.shape[0] - 1
        # The row tables are padded to the kernel's row capacity below:
        # checked here against N, before the padding hides their shape.
        for name, t, rows in (("state_indices", state_indices, N),
                              ("checkpoint_offsets", checkpoint_offsets, N + 1)):
            if t is not None and tuple(t.shape) != (rows,):
                raise ValueError(f"gdn::recurrent: argument '{name}' must be 1-D [{rows}] "
                                 f"({N} sequences in cu_seqlens), got shape {list(t.shape)}")
        if intermediate_states is None and k_window is None:
            tables = dict(checkpoint_offsets=checkpoint_offsets)
            given = cu_seqlens
            T_cap, N, cu_seqlens, state_indices, tables = _prefill_capacity(
                T, N, cu_seqlens, state_indices, tables)
            checkpoint_offsets = tables["checkpoint_offsets"]  # padded with the rows
            if cu_seqlens is not given:  # clamped (and padded) on the device just now
                fresh_early_inputs = True
            if T_cap != T:
                tokens, T = T, T_cap
    gate = g if g is not None else a
    bt = beta if beta is not None else b
    # KDA: gates per key channel [.., HV, K]; beta per value channel [.., HV, V].
    per_key_decay = gate is not None and gate.dim() == 4
    per_channel_beta = bt is not None and bt.dim() == 4
    states = (("state", state), ("initial_state", initial_state), ("final_state", final_state))
    pool_name, pool = next(((n, t) for n, t in states if t is not None), (None, None))
    index_dtype = lambda t: "int64" if t.dtype == torch.int64 else "int32"
    # Only the fields that matter (Compiler.compile refuses one set without
    # the field it depends on).
    desc = dict(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype=_dtype_of("q", q),
                qk_l2norm=qk_l2norm, scale=scale, layout=state_layout)
    if gate is not None:
        desc.update(decay="log_space" if g is not None else "fused_gating",
                    gate_dtype=_dtype_of("g" if g is not None else "a", gate),
                    per_key_decay=per_key_decay)
    if bt is not None:
        desc.update(beta="given" if beta is not None else "logits",
                    beta_dtype=_dtype_of("beta" if beta is not None else "b", bt),
                    per_channel_beta=per_channel_beta)
    if allow_neg_eigval:
        desc["allow_neg_eigval"] = True
    if stochastic_rounding:
        desc["stochastic_rounding"] = True
    if pool is not None:
        desc.update(initial_state=initial_state is not None or state is not None,
                    final_state=final_state is not None or state is not None,
                    state_in_place=state is not None, state_dtype=_dtype_of(pool_name, pool))
    if state_indices is not None:
        desc.update(num_slots=pool.shape[0], state_index_dtype=index_dtype(state_indices))
    if cu_seqlens is not None:
        desc["cu_seqlens_dtype"] = index_dtype(cu_seqlens)
    windows = dict(k_window=k_window, v_window=v_window, g_window=g_window,
                   beta_window=beta_window)
    if any(t is not None for t in windows.values()):
        for name, t in windows.items():
            if t is None or not t.is_contiguous():
                raise ValueError(f"gdn::recurrent: the replay windows come as four dense "
                                 f"tensors; {name} is {'missing' if t is None else 'strided'}")
        desc["replay_steps"] = k_window.shape[2]
    _check_scales("gdn::recurrent", (
        ("state_scale", state_scale, ("state", "initial_state", "final_state"),
         (state, initial_state, final_state)),
        ("intermediate_state_scale", intermediate_state_scale, ("intermediate_states",),
         (intermediate_states,))))
    checkpoints = (checkpoint_offsets, state_checkpoints)
    if checkpoint_interval or any(t is not None for t in checkpoints):
        if checkpoint_interval < 1 or any(t is None for t in checkpoints):
            raise ValueError(f"gdn::recurrent: checkpoints need checkpoint_interval >= 1, "
                             f"checkpoint_offsets and state_checkpoints together, got "
                             f"checkpoint_interval = {checkpoint_interval}")
        if not state_checkpoints.is_contiguous():
            raise ValueError("gdn::recurrent: state_checkpoints must be dense (contiguous)")
        if (state_checkpoints.dtype == torch.float8_e4m3fn) != (checkpoint_scale is not None):
            raise ValueError("gdn::recurrent: checkpoint_scale goes with float8_e4m3fn "
                             "state_checkpoints, and only with them; got state_checkpoints in "
                             f"{state_checkpoints.dtype} and checkpoint_scale "
                             f"{'given' if checkpoint_scale is not None else 'None'}")
        desc.update(checkpoint_interval=int(checkpoint_interval),
                    checkpoint_rows=state_checkpoints.shape[0],
                    checkpoint_offset_dtype=index_dtype(checkpoint_offsets),
                    checkpoint_dtype=_dtype_of("state_checkpoints", state_checkpoints))
    elif checkpoint_scale is not None:
        raise ValueError("gdn::recurrent: checkpoint_scale needs state_checkpoints")
    if intermediate_states is not None:
        desc.update(intermediate_rows=intermediate_states.shape[0],
                    intermediate_steps=intermediate_states.shape[1],
                    intermediate_dtype=_dtype_of("intermediate_states", intermediate_states))
        if intermediate_state_indices is not None:
            desc["intermediate_index_dtype"] = index_dtype(intermediate_state_indices)
        if retrieve_parent_token is not None:
            desc["parent_index_dtype"] = index_dtype(retrieve_parent_token)
    # Views: their strides are part of the kernel (and of its cache key).
    for field, name, t, layout in (
            ("q_strides", "q", q, "tokens"), ("k_strides", "k", k, "tokens"),
            ("v_strides", "v", v, "tokens"), ("gate_strides", "g/a", gate, "tokens"),
            ("beta_strides", "beta/b", bt, "tokens"), ("state_slot_stride", "state", pool, "slots"),
            ("intermediate_row_stride", "intermediate_states", intermediate_states, "slots")):
        strides = _view_strides(t, layout) if t is not None else None
        if strides is False:
            raise ValueError(f"gdn::recurrent: the kernels cannot address {name} with "
                             f"strides {list(t.stride())}")
        if strides and layout == "tokens" and tokens is not None:
            # [1, T', ...] in a kernel for the capacity T': the unit batch
            # dimension's stride is never stepped (T' tokens a batch row).
            strides = (T * strides[1],) + strides[1:]
        if strides:
            desc[field] = strides[0] if layout == "slots" else strides
    if (initial_state is not None and final_state is not None
            and _view_strides(initial_state, "slots") != _view_strides(final_state, "slots")):
        raise ValueError("gdn::recurrent: initial_state and final_state must have the "
                         "same strides")  # the kernel takes one state layout
    kern = _kernel(q.device, fresh_early_inputs, **desc)
    given = {"q": q, "k": k, "v": v, "g": g, "a": a, "A_log": A_log, "dt_bias": dt_bias,
             "beta": beta, "b": b, "state_indices": state_indices, "cu_seqlens": cu_seqlens,
             "intermediate_state_indices": intermediate_state_indices,
             "retrieve_parent_token": retrieve_parent_token, "initial_state": initial_state,
             "state": state, "intermediate_states": intermediate_states,
             "final_state": final_state, "o": o, "k_window": k_window, "v_window": v_window,
             "g_window": g_window, "beta_window": beta_window, "state_scale": state_scale,
             "checkpoint_offsets": checkpoint_offsets, "state_checkpoints": state_checkpoints,
             "intermediate_state_scale": intermediate_state_scale,
             "checkpoint_scale": checkpoint_scale}
    _launch(kern, given, "gdn::recurrent", q.device, tokens)


@recurrent.register_fake
def _(q, k, v, g, a, A_log, dt_bias, beta, b, state_indices, cu_seqlens,
      intermediate_state_indices, initial_state, state, intermediate_states, final_state, o,
      k_window, v_window, g_window, beta_window, state_scale, checkpoint_offsets,
      state_checkpoints, intermediate_state_scale, checkpoint_scale, scale, qk_l2norm,
      state_layout, allow_neg_eigval=False,
      retrieve_parent_token=None, fresh_early_inputs=False, checkpoint_interval=0,
      stochastic_rounding=False):
    return None


# Ops compiled from MLIR text: gdn::commit (an accepted prefix's state
# copied into the pool, gdn.commit) and gdn::replay_commit (gdn.replay_commit)

_MLIR_TYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
               torch.float8_e4m3fn: "f8E4M3FN", torch.int32: "i32", torch.int64: "i64"}
_text_kernels = {}


def _memref(t, name, op):
    """The memref type of tensor t (argument `name` of gdn::`op`): dense, or
    the strided view the kernels read in place (_view_strides; the callers
    checked it); TypeError naming it for a dtype no kernel takes."""
    text = "memref<" + "".join(f"{d}x" for d in t.shape) + _type_name(_MLIR_TYPES, t, name, op)
    strides = _view_strides(t, "slots") if t.dim() > 1 else None
    if strides:
        text += ", strided<[" + ", ".join(map(str, strides)) + "]>"
    return text + ">"


def _text_kernel(op, operands, attributes):
    """The compiled function @gdn_<op> (cached by device, operand types and
    attributes) holding one `gdn.<op>` whose operands are the function's
    arguments: `operands` (name, tensor or None) in the op's order, None
    left out; `attributes` the text of its attribute dictionary."""
    operands = [(name, t) for name, t in operands if t is not None]
    device = operands[0][1].device
    types = [(name, _memref(t, name, op)) for name, t in operands]
    key = (device.type, device.index, op, attributes) + tuple(types)
    k = _text_kernels.get(key)
    if k is None:
        sig = ", ".join(f"%{name}: {ty}" for name, ty in types)
        body = " ".join(f"{name}(%{name} : {ty})" for name, ty in types)
        text = (f"func.func @gdn_{op}({sig}) {{\n"
                f"  gdn.{op} {body} {attributes}\n"
                f"  return\n}}\n")
        target = "cuda" if device.type == "cuda" else "cpu"
        chip = _chip(device) if target == "cuda" else None
        k = default_compiler().compile_text(text, function=f"gdn_{op}", target=target,
                                            chip=chip)
        _text_kernels[key] = k
    return k


@torch.library.custom_op("gdn::commit", mutates_args=("state", "state_scale"))
def commit(intermediate_states: torch.Tensor, accepted: torch.Tensor, state: torch.Tensor,
           state_indices: Optional[torch.Tensor],
           intermediate_state_indices: Optional[torch.Tensor],
           state_scale: Optional[torch.Tensor],
           intermediate_state_scale: Optional[torch.Tensor],
           state_layout: str = "vk") -> None:
    """The gdn.commit op on validated tensors (dense, or pools and buffers
    whose slots or rows have a pitch): for every row n,
    state[slot] <- intermediate_states[row, min(accepted[n], T) - 1] with
    slot = state_indices[n] (or n) and row = intermediate_state_indices[n]
    (or n); rows with slot < 0, row < 0 or accepted[n] <= 0 touch nothing.
    A float8_e4m3fn state comes with state_scale [slots, HV, V] float32,
    its row scales, written with the committed rows (docs/math.md §6);
    float8_e4m3fn intermediate_states with intermediate_state_scale [R, T,
    HV, V] float32 (read). state_layout ("vk" or "kv") names the last two
    dimensions of both; it matters only where a row scale is applied. A
    read-only argument that shares bytes with state or state_scale is read
    from a copy taken before the launch (_checks._read_apart)."""
    _check_scales("gdn::commit", (
        ("state_scale", state_scale, ("state",), (state,)),
        ("intermediate_state_scale", intermediate_state_scale, ("intermediate_states",),
         (intermediate_states,))))
    if accepted.shape[0] == 0:
        return
    # Aliasing (_read_apart) is checked here, where torch.compile does not
    # trace: a read that shares bytes with the state or its scales is read
    # from a copy.
    given = {"intermediate_states": intermediate_states, "accepted": accepted,
             "state_indices": state_indices,
             "intermediate_state_indices": intermediate_state_indices,
             "intermediate_state_scale": intermediate_state_scale}
    given = _read_apart("gdn::commit", given,
                        {"state": state, "state_scale": state_scale}) or given
    given.update(state_scale=state_scale, state=state)
    kern = _text_kernel("commit", list(given.items()),
                        f"{{state_layout = {_layout_attr('gdn::commit', state_layout)}}}")
    _launch(kern, given, "gdn::commit", state.device)


@commit.register_fake
def _(intermediate_states, accepted, state, state_indices, intermediate_state_indices,
      state_scale, intermediate_state_scale, state_layout="vk"):
    return None


def _layout_attr(what: str, state_layout: str) -> str:
    """The #gdn.layout attribute of `state_layout` ("vk" or "kv"; else a
    ValueError naming it: the text kernels paste it into their MLIR)."""
    if state_layout not in ("vk", "kv"):
        raise ValueError(f"{what}: state_layout must be 'vk' or 'kv', got {state_layout!r}")
    return f"#gdn.layout<{state_layout}>"


@torch.library.custom_op("gdn::replay_commit", mutates_args=("state", "state_scale"))
def replay_commit(k_window: torch.Tensor, v_window: torch.Tensor, g_window: torch.Tensor,
                  beta_window: torch.Tensor, accepted: torch.Tensor, state: torch.Tensor,
                  state_indices: Optional[torch.Tensor], state_scale: Optional[torch.Tensor],
                  qk_l2norm: bool, state_layout: str,
                  retrieve_parent_token: Optional[torch.Tensor] = None) -> None:
    """The gdn.replay_commit op on validated dense tensors with a leading
    layer dimension: k_window [LY, slots, H, L, K], v_window
    [LY, slots, HV, L, V], g_window, beta_window [LY, slots, HV, L],
    accepted [N], state_indices [N] or None (slot n), state
    [LY, slots, HV, V, K] ("vk") or [.., K, V] ("kv"): for every layer and
    row with slot >= 0 and a = min(accepted[n], L) >= 1, the state of that
    slot advances by the row's first a window steps (with
    retrieve_parent_token [N, P]: by the tree path to step
    min(accepted[n], P) - 1), in place. A float8_e4m3fn state comes with
    state_scale [LY, slots, HV, V] float32, its row scales. A read-only
    argument that shares bytes with state or state_scale is read from a
    copy taken before the launch (_checks._read_apart)."""
    _check_scales("gdn::replay_commit", (("state_scale", state_scale, ("state",), (state,)),))
    if accepted.shape[0] == 0:
        return
    # Aliasing (_read_apart) is checked here, where torch.compile does not
    # trace: a read that shares bytes with the state or its scales is read
    # from a copy.
    given = {"k_window": k_window, "v_window": v_window, "g_window": g_window,
             "beta_window": beta_window, "accepted": accepted, "state_indices": state_indices,
             "retrieve_parent_token": retrieve_parent_token}
    given = _read_apart("gdn::replay_commit", given,
                        {"state": state, "state_scale": state_scale}) or given
    given.update(state_scale=state_scale, state=state)
    # set_schedule pins the GPU kernel's parameters here too (the token
    # loop keeps its own: no staging, solve, producer or prefetch).
    pinned = ""
    if _schedule and state.device.type == "cuda":
        pinned = f", gdn.schedule = {schedule_text(dict(_schedule))}"
    attributes = (("{qk_l2norm, " if qk_l2norm else "{") +
                  f"state_layout = {_layout_attr('gdn::replay_commit', state_layout)}{pinned}}}")
    kern = _text_kernel("replay_commit", list(given.items()), attributes)
    _launch(kern, given, "gdn::replay_commit", state.device)


@replay_commit.register_fake
def _(k_window, v_window, g_window, beta_window, accepted, state, state_indices, state_scale,
      qk_l2norm, state_layout, retrieve_parent_token=None):
    return None
