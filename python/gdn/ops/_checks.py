"""The argument checks the entry points share: TypeError / ValueError naming
the argument, raised before any launch. Views the kernels read in place
(`_view_strides`: q, k, v and the gates of a fused projection, pools and
buffers whose slots are views of a larger record) pass as they are; other
read-only views are copied to contiguous tensors; a tensor written in place
is never copied."""
import math

import torch

from .. import _check_scale, _dense_strides


class _StridedInPlace(NotImplementedError, ValueError):
    """A view the anchor takes through its strides and the kernels cannot
    read in place (`_view_strides`): a tensor the kernel writes in place (a
    state, a pool, a buffer, an output; gdn never copies those) or SGLang's
    strided retrieve_parent_token. Not supported (NotImplementedError) and
    a bad layout (ValueError)."""


def _view_strides(t, layout):
    """The element strides the kernels take for `t` in place: None when t is
    contiguous, else a tuple (size-1 dimensions given their dense stride),
    or False when the op refuses t's layout. The op's rules
    (include/gdn/Dialect/GDN/IR/OperandLayouts.h; test_strided.py checks
    this mirror against the verifier): the kernel's pointer is t.data_ptr();
    every stride >= 0 and a multiple of min(16 bytes, the largest power of
    two dividing the innermost size) elements; layout "tokens" (q, k, v, the
    gates; read only): the innermost stride 1, the others free; "slots"
    (states, pools, per-token state buffers): the leading stride free but at
    least a slot's elements, the others dense."""
    if t.is_contiguous():
        return None
    shape, strides = tuple(t.shape), t.stride()
    if 0 in shape:
        return None
    dense = _dense_strides(shape)
    inner = shape[-1]
    align = min(max(1, 16 // t.element_size()), inner & -inner)
    out = []
    for i, (n, s, d) in enumerate(zip(shape, strides, dense)):
        if n == 1:
            out.append(d)
            continue
        free = (layout == "tokens" and i != len(shape) - 1) or (layout == "slots" and i == 0)
        if not free:
            if s != d:
                return False
        elif s < 0 or s % align or (layout == "slots" and s < dense[0]):
            return False
        out.append(s)
    return tuple(out)


def _byte_span(t):
    """The bytes [first, end) that t's elements lie in (torch strides are >= 0),
    or None for an empty tensor. Views interleaved in one buffer (q, k and v
    of a fused projection) have spans that overlap though their elements do
    not."""
    size = t.nbytes
    if not size:
        return None
    first = t.data_ptr()
    if t.is_contiguous():
        return first, first + size
    item = t.element_size()
    return first, first + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) * item + item


def _read_apart(what, reads, writes):
    """Keeps a kernel's reads apart from its writes: one launch reads and
    writes its arguments in an order no kernel form defines (CTAs, split
    segments), so a read-only argument whose bytes a written argument may
    reach would see some of the writes. reads / writes: {name: tensor or
    None}, the read-only and the written (or updated in place) arguments.
    A read whose byte span meets a written one's is replaced by a copy made
    before the launch (its strides kept where they are a slot pitch, since
    the op matches the states' strides; else dense), so the kernel reads the
    values as they were; two written arguments whose spans meet: ValueError
    naming both. Returns the reads with the copies in place, or None where
    none was made. About 8 µs of host time a call with a handful of tensors
    (the 2-core development machine)."""
    spans = []
    for name, t in writes.items():
        if t is not None:
            span = _byte_span(t)
            if span:
                for other, (lo, hi) in spans:
                    if span[0] < hi and lo < span[1]:
                        raise ValueError(f"{what}: arguments '{other}' and '{name}' are both "
                                         "written and share memory (their byte spans overlap);"
                                         " give each its own buffer")
                spans.append((name, span))
    copies = None
    for name, t in reads.items():
        if t is None:
            continue
        span = _byte_span(t)
        if span and any(span[0] < hi and lo < span[1] for _, (lo, hi) in spans):
            if not t.is_contiguous() and _view_strides(t, "slots"):
                copy = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype,
                                           device=t.device).copy_(t)
            else:
                copy = t.clone(memory_format=torch.contiguous_format)
            copies = dict(reads) if copies is None else copies
            copies[name] = copy
    return copies


def _dense_like(t):
    """A new row-major tensor of t's shape, dtype and device: an output the
    kernel writes densely (torch.empty_like keeps a permuted t's strides,
    e.g. a time-major v, which the kernel's o would then not match)."""
    return torch.empty(t.shape, dtype=t.dtype, device=t.device)


def _check(name, t, device, shape=None, dtypes=None, copy=False, written=False,
           strided=False, layout=None):
    """Checks t's type, device, dtype and shape (TypeError / ValueError naming
    it) and returns it. A non-contiguous t is returned as it is when the
    kernels read it in place (`layout` "tokens" or "slots", see
    _view_strides); else, with copy (a read-only input, as FLA's input_guard
    makes it contiguous), as a contiguous copy; with written (written in
    place) or strided (an anchor takes it strided) a _StridedInPlace; else a
    ValueError."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, expected {device} (the device of q)")
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {t.dtype}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
    if t.requires_grad and torch.is_grad_enabled():  # never a silently dropped gradient
        raise NotImplementedError(
            f"gdn: argument '{name}' requires grad, and gdn's kernels have no backward pass "
            "yet; call them under torch.no_grad() or torch.inference_mode()")
    if not t.is_contiguous():
        if layout is not None and _view_strides(t, layout) is not False:
            return t  # read (and written) in place through its strides
        if copy:
            return t.contiguous()
        if written or strided:
            what = ("only the leading (slot or row) dimension may have a pitch (at least "
                    "a slot, a multiple of 16 bytes); the others must be dense"
                    if layout == "slots" else f"{name} must be contiguous")
            raise _StridedInPlace(
                f"gdn: argument '{name}' is a strided view{' written in place' if written else ''}"
                f" (strides {list(t.stride())}) the kernels cannot address: {what}")
        raise ValueError(f"{name} must be contiguous")
    return t


_INPUT = (torch.float32, torch.bfloat16, torch.float16)


def _check_qkv(q, k, v):
    """q, k [B, T, H, K], v [B, T, HV, V] of one dtype. Views (a fused
    projection's slices) are read in place where the kernels can address
    them (_view_strides), else copied. Returns (q, k, v, device, B, T, H, K,
    HV, V)."""
    if not isinstance(q, torch.Tensor):
        raise TypeError(f"q must be a torch.Tensor, got {type(q).__name__}")
    if q.dim() != 4:
        raise ValueError(f"q must be [B, T, H, K], got shape {list(q.shape)}")
    dev = q.device
    q = _check("q", q, dev, None, _INPUT, copy=True, layout="tokens")
    k = _check("k", k, dev, q.shape, (q.dtype,), copy=True, layout="tokens")
    if not isinstance(v, torch.Tensor) or v.dim() != 4:
        raise ValueError("v must be a 4-D tensor [B, T, HV, V]")
    B, T, H, K = q.shape
    if H == 0 or K == 0:
        raise ValueError(f"q must have at least one head and one key channel [B, T, H >= 1, "
                         f"K >= 1], got shape {list(q.shape)}")
    v = _check("v", v, dev, (B, T, v.shape[2], v.shape[3]), (q.dtype,), copy=True,
               layout="tokens")
    HV = v.shape[2]
    if HV == 0 or v.shape[3] == 0:
        raise ValueError(f"v must have at least one head and one value channel [B, T, HV >= 1, "
                         f"V >= 1], got shape {list(v.shape)}")
    if HV % H != 0:
        raise ValueError(f"v has HV = {HV} heads, not a multiple of H = {H} (q/k heads)")
    return q, k, v, dev, B, T, H, K, HV, v.shape[3]


def _f32_param(name, t, dev, shape, flat=False):
    """A gating parameter (A_log, dt_bias) in float32, bfloat16 or float16 as
    the contiguous float32 tensor the kernels take (the anchors' kernels
    convert on load; here a conversion kernel runs first). flat: any shape of
    that many elements is accepted (the anchors read it flat, e.g. Kimi
    Linear's A_log [1, 1, HV, 1])."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if flat and t.numel() == math.prod(shape) and tuple(t.shape) != tuple(shape):
        t = t.reshape(shape)
    t = _check(name, t, dev, shape, _INPUT, copy=True)
    return t if t.dtype == torch.float32 else t.float()


def _per_token(t, B, T, tail):
    """SGLang's flattened token tensors as [B, T, *tail]: [B * T, prod(tail)]
    (a and b of SGLang 0.5.23's GDN and KDA decode, 2-D) and, with a tail of
    two dimensions, [B, T, prod(tail)] (KDA's a [B, T, HV * K]). A view when
    t is contiguous. Anything else is returned as it is (and checked later)."""
    if not isinstance(t, torch.Tensor):
        return t
    n = math.prod(tail)
    if (t.dim() == 2 and tuple(t.shape) == (B * T, n)) or (
            len(tail) > 1 and t.dim() == 3 and tuple(t.shape) == (B, T, n)):
        return t.reshape(B, T, *tail)
    return t


def _scale(scale):
    """The scale applied to q: None means K^-0.5; any other real number is
    used as given (FLA's scale=0 gives o = 0). NaN, inf and values past
    float32's range are a ValueError naming scale."""
    if scale is None:
        return None
    if isinstance(scale, torch.Tensor) and scale.numel() == 1:
        scale = scale.item()
    return _check_scale(scale)


def _unsupported(**kwargs):
    for name, value in kwargs.items():
        if value is not None and value is not False:
            raise NotImplementedError(f"gdn: argument '{name}' is not supported yet")



def _check_cu_seqlens(cu_seqlens, dev, B, T):
    """(cu_seqlens, number of sequences, copied): B, or with cu_seqlens
    [N + 1] (varlen, B == 1) N. Sequence n owns packed tokens
    [cu[n], cu[n + 1]) (the kernels clamp each range to [0, T]: offsets out
    of order or past T never address outside the tensors). A strided view is
    copied (copied: True). GDN_VALIDATE_INDICES=1 checks cu[0] == 0,
    non-decreasing offsets and cu[N] == T on the host (synchronises)."""
    if cu_seqlens is None:
        return None, B, False
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.dim() != 1:
        raise ValueError("cu_seqlens must be a 1-D tensor [N + 1]")
    given = cu_seqlens
    cu_seqlens = _check("cu_seqlens", cu_seqlens, dev, None, (torch.int32, torch.int64),
                        copy=True)
    if B != 1:
        raise ValueError(f"cu_seqlens needs packed tokens with batch 1, got batch {B}")
    if cu_seqlens.shape[0] == 0:
        raise ValueError("cu_seqlens must hold N + 1 >= 1 offsets (at least [0]), got an "
                         "empty tensor")
    if _validate_indices():
        cu = cu_seqlens.tolist()
        if cu[0] != 0:
            raise ValueError(f"cu_seqlens[0] must be 0, got {cu[0]}")
        for n in range(1, len(cu)):
            if cu[n] < cu[n - 1]:
                raise ValueError(f"cu_seqlens must be non-decreasing, got cu_seqlens[{n}] = "
                                 f"{cu[n]} < cu_seqlens[{n - 1}] = {cu[n - 1]}")
        if cu[-1] != T:
            raise ValueError(f"cu_seqlens[-1] = {cu[-1]} must be the number of packed tokens "
                             f"T = {T} (q.shape[1])")
    return cu_seqlens, cu_seqlens.shape[0] - 1, cu_seqlens is not given


def _check_pool_slots(name, pool, rows):
    """A pool [slots, HV, ...] addressed by `rows` > 0 rows needs a slot (a
    0-slot pool would compile a kernel without one)."""
    if rows and pool.shape[0] == 0:
        raise ValueError(f"{name} has 0 slots; a pool addressed by {rows} rows needs at "
                         "least one (shape [slots >= 1, HV, V, K])")


def _check_pool(name, pool, dev, HV, V, K, rows, what="slots"):
    """A state pool [slots, HV, V, K] written (or read) in place: float32,
    bfloat16, float16, or float8_e4m3fn with row scales attached
    (quantized._state_scale_of)."""
    if not isinstance(pool, torch.Tensor) or pool.dim() != 4:
        raise ValueError(f"{name} must be a 4-D tensor [{what}, HV, V, K]")
    _check(name, pool, dev, (pool.shape[0], HV, V, K), _INPUT + (torch.float8_e4m3fn,),
           written=True, layout="slots")
    _check_pool_slots(name, pool, rows)
    return pool



def _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b, K=None, V=None):
    """Fused gating inputs: A_log, dt_bias [HV] (any shape of HV elements),
    both float32, bfloat16 or float16 (converted to float32); a, b
    [B, T, HV] (or SGLang's 2-D [B * T, HV]). With K (KDA): a [B, T, HV, K]
    (or [B * T, HV * K], [B, T, HV * K]) and dt_bias [HV * K] (or [HV, K],
    flattened); with V, b may also be per value channel [B, T, HV, V].
    Strided read-only views are copied. Returns (A_log, a, dt_bias, b) to
    pass on."""
    A_log = _f32_param("A_log", A_log, dev, (HV,), flat=True)
    if K is None:
        a = _check("a", _per_token(a, B, T, (HV,)), dev, (B, T, HV), _INPUT, copy=True, layout="tokens")
        dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV,), flat=True)
    else:
        a = _check("a", _per_token(a, B, T, (HV, K)), dev, (B, T, HV, K), _INPUT, copy=True, layout="tokens")
        if isinstance(dt_bias, torch.Tensor) and dt_bias.dim() == 2:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV, K)).reshape(HV * K)
        else:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV * K,))
    if V is not None and isinstance(b, torch.Tensor) and b.dim() == 4:
        b = _check("b", b, dev, (B, T, HV, V), _INPUT, copy=True, layout="tokens")
    else:
        b = _check("b", _per_token(b, B, T, (HV,)), dev, (B, T, HV), _INPUT, copy=True, layout="tokens")
    return A_log, a, dt_bias, b


def _check_indices(name, t, device, B, validate_slots=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    _check(name, t, device, (B,), (torch.int32, torch.int64))
    if validate_slots is not None and B:
        # Debug aid (GDN_VALIDATE_INDICES=1): synchronises with the device.
        hi = int(t.max())
        if hi >= validate_slots:
            raise ValueError(f"{name} holds slot {hi}, past the pool's {validate_slots} slots")
    return t


def _validate_indices():
    import os
    return os.environ.get("GDN_VALIDATE_INDICES") == "1"
