#!/usr/bin/env python3
"""Input fuzzer of gdn-opt, gdn-run and the C API (issue 18).

Mutated .mlir files go through gdn-opt and gdn-run, random gdnRecurrentDesc
values through the Python package. Every case runs in subprocesses under a
timeout (--timeout, 20 s a command) and a 4 GiB address-space limit; any case
that crashes, aborts, hangs or computes a wrong result is a failure, printed
with its reproducer (saved under --out). Last line:
"fuzz-inputs: N cases, F failures (seed S, T s)"; exits 1 when F > 0. The
cases are a function of the seed (case i draws from Random("seed:i")); the
time budget only decides how many run.

  scripts/fuzz-inputs.py [--seconds 60] [--seed S] [--jobs 2] [--out DIR]
      [--bin build/bin] [--cases N] [--only mlir|desc] [--verbose]
  scripts/fuzz-inputs.py --replay OUT/case-N.mlir | OUT/case-N.py

(a) .mlir mutants of examples/*.mlir and bench/sweeps/*.mlir (often shrunk
    first so that they still run): memref dimensions (0, 1, -1, ?, off by
    one, 2^62 + 1, consistent ones whose products overflow 64 bits),
    element types, operand clauses deleted, duplicated, renamed or rewired,
    attributes deleted or flipped (scale 0 / -1 / 1e38 / inf / NaN,
    state_layout, qk_l2norm, allow_neg_eigval), truncation, random bytes,
    deep nesting, strided or dynamic memrefs, views (legal padded strides
    and offsets, run and checked like any mutant), the tensor form, a
    gdn.schedule on the op (a #gdn.schedule of the table's parameters, or
    one past its edges, or the old dictionary form). Each mutant
    goes through `gdn-opt F`, `gdn-opt --gdn-lower-to-ptx F`, one more
    README pipeline (or --gdn-select-schedule with options past their
    edges: chip, sm-count and a schedule={#gdn.schedule<...>} of
    fuzz-schedules.py's parameters, values or the whole text past the
    attribute's edges), `gdn-run --emit=ptx F` (sometimes with --chip,
    --sm-count and --schedule likewise) and, when
    the problem is small (or so large that it must be refused),
    `gdn-run --target=cpu --check F` (sometimes with other flags at their
    edges: --parents, --tol-o, --iters, ...); 30% also through
    gdn.Compiler().compile_text (cpu or cuda). Verdict: exit 0, or 1 with a
    diagnostic; a check that FAILS on a mutant that verified (moderate
    scale, q/k L2 norm on) is a wrong result.
(b) gdnRecurrentDesc values through gdn.Compiler().compile(...): in-range
    small problems, out-of-range sizes and sizes whose products overflow,
    bad dtypes and enums, random bools, chip, sm_count and schedules (a dict
    or the #gdn.schedule text of fuzz-schedules.py's parameters, sometimes
    past their edges, or not a schedule at all), raw C fields (bad enums,
    struct_size, abi_version, scale, schedule texts) through
    gdnCompileDesc, for cpu and cuda (PTX only). A small CPU kernel runs with
    run_host on random inputs, random cu_seqlens (valid, out of range,
    negative, decreasing), in-range or negative state_indices and
    intermediate_state_indices and random EAGLE parent tables, and is
    compared with python/tests/reference.py (o, final and intermediate
    states; padding rows zero; unused slots, rows and tokens bit for bit;
    inputs unchanged). Some kernels are also misused (a CPU kernel launched,
    a CUDA one run on the host or launched without a driver, too few
    arguments), and some CUDA compiles go through a private disk cache whose
    entries are corrupted (truncated, flipped, FIFOs, directories, symlinks)
    before a second compiler loads them: it must give the same PTX.
    Allowed: success, or GDNError / ValueError / TypeError /
    NotImplementedError; an out-of-range raw enum that compiles fails.
"""
import argparse
import concurrent.futures
import glob
import importlib.util
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TIMEOUT_S = 20
MEMORY_LIMIT = 4 << 30
CRASH_TEXT = ("LLVM ERROR", "PLEASE submit a bug report", "Stack dump", "Assertion `",
              "UNREACHABLE executed", "terminate called", "Aborted", "Segmentation fault",
              "AddressSanitizer", "core dumped")
RESULT_TAG = "FUZZ-RESULT "


def _load_schedules():
    """fuzz-schedules.py: its tables of #gdn.schedule parameters (values the
    attribute takes and the edges past them) and of gdn-run flags, shared
    rather than copied."""
    spec = importlib.util.spec_from_file_location(
        "fuzz_schedules", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       "fuzz-schedules.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCHEDULES = _load_schedules()
# gdn-run flags and gdn-select-schedule options beside the schedule.
FLAG_OPTIONS = SCHEDULES.FLAGS + [
    ("sm-count", [0, 1, 132, 4096, 4097, -1]),
]
# Whole schedule texts past the attribute's syntax (or not one at all).
SCHEDULE_TEXTS = [
    "", "#gdn.schedule<>", "#gdn.schedule<", "#gdn.schedule", "#gdn.schedule<>>",
    "{rows_per_warp = 2 : i64}", "{}", "4 : i64", "#gdn.layout<vk>", "unit",
    "#gdn.schedule<rows_per_warp = 2>", "#gdn.schedule<warps = 2, warps = 4>",
    "#gdn.schedule<warps = 1> x", "#gdn.schedule<warps = 1>>", " #gdn.schedule<warps = 2>",
    "#gdn.schedule<warps = 2>  ", "#gdn.schedule<warps>", "#gdn.schedule<= 2>",
    "#gdn.schedule<reductions = >", "#gdn.schedule<warps = true>",
    "#gdn.schedule<staged_tokens = false>", "#gdn.schedule<warps = 0x10>",
    "#gdn.schedule<warps = 1.0>", "#gdn.schedule<solve = #gdn.schedule<>>",
    "#gdn.schedule<launch = \"programmatic\">", "\"#gdn.schedule<warps = 1>\"",
    "#gdn.schedule<" + "warps = 1, " * 300 + ">", "#gdn.schedule<" * 200,
    "#gdn.schedule<warps = 1}", "#gdn.schedule<warps = 1, >",
]


# --------------------------------------------------------------------------
# Running one command under limits, and the verdict on it.

def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_limited(cmd, stdin=None, env=None, timeout=None):
    """(returncode or None on timeout, stdout, stderr, seconds)."""
    timeout = timeout or TIMEOUT_S
    t0 = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, preexec_fn=_limits,
                         start_new_session=True)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = None
    dec = lambda b: b.decode("utf-8", "replace")
    return rc, dec(out), dec(err), time.time() - t0


def crash_verdict(rc, stderr, allowed=(0, 1)):
    """Why a finished process is a failure (None: it is not)."""
    if rc is None:
        return f"timeout (> {TIMEOUT_S} s)"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return f"killed by signal {name}"
    for text in CRASH_TEXT:
        if text in stderr:
            return f"crash text '{text}' in stderr (exit {rc})"
    if rc not in allowed:
        return f"exit code {rc}"
    return None


# An MLIR diagnostic, or LLVM's command-line parser refusing an option value.
DIAGNOSTIC = re.compile(r"error:|: for the -+[\w-]+ option: |Unknown command line argument|"
                        r"may only occur zero or one times|Too many positional arguments")


def tool_verdict(rc, out, err, check_oracle):
    what = crash_verdict(rc, err)
    if what:
        return what
    if rc == 1 and "FAILED" in out:
        return "check FAILED: wrong result" if check_oracle else None
    if rc == 1 and not DIAGNOSTIC.search(err):
        return "exit 1 without a diagnostic"
    return None


# --------------------------------------------------------------------------
# (a) .mlir mutants.

SHAPED = re.compile(r"\b(memref|tensor|vector)<([^<>]*)>")
DIMS = re.compile(r"^((?:(?:\d+|\?)x)*)(.*)$", re.S)
CLAUSE = re.compile(r"\b(\w+)\(\s*(%[\w$.\-]+)\s*:\s*([^()]*?)\)")
ROLES = ["q", "k", "v", "g", "a", "A_log", "dt_bias", "beta", "b", "state_indices",
         "cu_seqlens", "intermediate_state_indices", "retrieve_parent_token",
         "initial_state", "intermediate_states", "final_state", "o"]
DIM_EDGES = [0, 1, 2, 3, -1, "?", 7, 31, 33, 127, 129, 4611686018427387905,
             9223372036854775807, 9223372036854775808, 18446744073709551616,
             4294967296, 4294967297, 2147483647, 2147483648, 65536, 1 << 40]
ETYPES = ["f32", "bf16", "f16", "i32", "i64", "f64", "i1", "i8", "index", "f8E4M3FN",
          "tf32", "complex<f32>", "none", "i128", "si32", "ui32"]
SCALES = ["0.0 : f32", "-1.0 : f32", "1.0e38 : f32", "0x7F800000 : f32", "0xFF800000 : f32",
          "0x7FC00000 : f32", "3.40282347e38 : f32", "1.0e39 : f32", "1.0e-45 : f32",
          "-0.0 : f32", "1 : i32", "1.0 : f64", "0.5 : bf16", "\"x\"", "0.25", "unit",
          "0x00000001 : f32", "2.0 : f32", "[1.0 : f32]"]
LAYOUTS = ["#gdn.layout<vk>", "#gdn.layout<kv>", "#gdn.layout<>", "#gdn.layout<xy>",
           "\"vk\"", "1 : i32", "#gdn.layout<vk", "unit", "#gdn.layout<kv, vk>"]
BOOL_ATTRS = ["qk_l2norm", "allow_neg_eigval"]
BOOL_FORMS = ["{}", "{} = true", "{} = false", "{} = 3 : i32", "{} = \"yes\"", "{} = unit"]
NESTING = [("(", 5000), ("tuple<", 20000), ("[", 10000), ("{", 5000), ("memref<", 5000),
           ("vector<1x", 3000), ("#gdn.layout<", 3000), ("\"", 1), ("(", 255), ("[", 300)]
BUFFERIZE = ("--one-shot-bufferize=bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map")
PIPELINES = [
    [],
    ["--gdn-lower-to-cpu"],
    ["--gdn-select-schedule"],
    ["--gdn-select-schedule=schedule={#gdn.schedule<columns_per_lane = 2, warps = 4>}",
     "--convert-gdn-to-gpu"],
    ["--convert-gdn-to-cpu"],
    ["--convert-gdn-to-gpu"],  # no schedule: refused, run gdn-select-schedule
    ["--gdn-select-schedule", "--convert-gdn-to-gpu"],
    ["--gdn-lower-to-ptx", "--mlir-print-ir-after-all"],
    [BUFFERIZE, "--gdn-lower-to-cpu"],
    ["--one-shot-bufferize=bufferize-function-boundaries", "--gdn-lower-to-ptx"],
    ["--canonicalize", "--cse"],
    ["--gdn-select-schedule=sm-count=9223372036854775807"],
]


def parse_dims(body):
    """(dims [int or '?' or str], element type) of a shaped type's body."""
    m = DIMS.match(body)
    dims = []
    for d in m.group(1).split("x")[:-1]:
        dims.append(int(d) if d.isdigit() else d)
    return dims, m.group(2)


def shaped_spans(text):
    return [m for m in SHAPED.finditer(text)]


def replace_span(text, start, end, new):
    return text[:start] + new + text[end:]


def op_span(text):
    m = re.search(r"gdn\.recurrent", text)
    if not m:
        return None
    r = re.search(r"\n\s*return\b", text[m.end():])
    return (m.start(), m.end() + r.start()) if r else (m.start(), len(text))


def clauses(text):
    span = op_span(text)
    if not span:
        return []
    return [m for m in CLAUSE.finditer(text, span[0], span[1])]


def attr_dict(text):
    """The op's attribute dictionary {...} as a match span (None if none)."""
    span = op_span(text)
    if not span:
        return None
    for m in re.finditer(r"\{[^{}\n]*\}", text[span[0]:span[1]]):
        return (span[0] + m.start(), span[0] + m.end())
    return None


def dim_edge(rng, old):
    choices = list(DIM_EDGES)
    if isinstance(old, int):
        choices += [old - 1, old + 1, 2 * old, max(old // 2, 1), old * 1024]
    return rng.choice(choices)


def set_dims(body, dims):
    _, et = parse_dims(body)
    return "".join(f"{d}x" for d in dims) + et


def m_dim_one(rng, text):
    spans = shaped_spans(text)
    if not spans:
        return text, "dim-one: no shaped type"
    m = rng.choice(spans)
    dims, _ = parse_dims(m.group(2))
    if not dims:
        return text, "dim-one: rank 0"
    i = rng.randrange(len(dims))
    new = dim_edge(rng, dims[i])
    dims[i] = new
    return (replace_span(text, m.start(2), m.end(2), set_dims(m.group(2), dims)),
            f"dim-one: dim {i} of one {m.group(1)} -> {new}")


def remap_dims(text, mapping):
    """Every dimension d of every shaped type -> mapping.get(d, d)."""
    def sub(m):
        dims, et = parse_dims(m.group(2))
        return f"{m.group(1)}<" + "".join(f"{mapping.get(d, d)}x" for d in dims) + et + ">"
    return SHAPED.sub(sub, text)


def all_dims(text):
    out = set()
    for m in shaped_spans(text):
        out.update(d for d in parse_dims(m.group(2))[0] if isinstance(d, int))
    return sorted(out)


def m_dim_all(rng, text):
    dims = all_dims(text)
    if not dims:
        return text, "dim-all: none"
    old = rng.choice(dims)
    new = dim_edge(rng, old)
    return remap_dims(text, {old: new}), f"dim-all: every {old} -> {new}"


def m_overflow(rng, text):
    """Consistent dimensions whose products overflow 64 bits (2^32 x 2^32)
    while each of them fits: every shape still agrees with the others."""
    dims = all_dims(text)
    if not dims:
        return text, "overflow: none"
    picked = rng.sample(dims, min(len(dims), rng.randint(2, 4)))
    mapping = {d: rng.choice([2**16, 2**21, 2**31, 2**32, 2**33, 2**62]) for d in picked}
    return remap_dims(text, mapping), f"overflow: {mapping}"


def shrink(rng, text):
    """Consistently smaller dimensions (K, V 128 -> 16..64, heads and
    batch /2../8), keeping products of two mapped values (dt_bias [HV * K])
    products, so that many mutants still verify and run on the CPU."""
    dims = all_dims(text)
    mapping = {}
    for d in dims:
        if d == 128:
            mapping[d] = rng.choice([16, 32, 32, 64])
        elif d >= 8 and rng.random() < 0.7:
            mapping[d] = max(1, d // rng.choice([2, 4, 8]))
    for d in dims:  # products of two others: dt_bias [HV * K] of KDA
        for u in dims:
            if u >= 32 and d > u and d % u == 0 and d // u in dims and d not in (u, d // u):
                mapping[d] = mapping.get(u, u) * mapping.get(d // u, d // u)
    return remap_dims(text, mapping)


def m_etype(rng, text):
    spans = shaped_spans(text)
    if not spans:
        return text, "etype: none"
    new = rng.choice(ETYPES)
    if rng.random() < 0.5:
        m = rng.choice(spans)
        dims, et = parse_dims(m.group(2))
        body = "".join(f"{d}x" for d in dims) + new
        return replace_span(text, m.start(2), m.end(2), body), f"etype-one: {et} -> {new}"
    old = rng.choice(sorted({parse_dims(m.group(2))[1] for m in spans}))

    def sub(m):
        dims, et = parse_dims(m.group(2))
        return (f"{m.group(1)}<" + "".join(f"{d}x" for d in dims)
                + (new if et == old else et) + ">")
    return SHAPED.sub(sub, text), f"etype-all: {old} -> {new}"


def m_clause(rng, text):
    cs = clauses(text)
    if not cs:
        return text, "clause: none"
    m = rng.choice(cs)
    kind = rng.choice(["delete", "duplicate", "rename", "rewire", "swap", "retype", "empty"])
    if kind == "delete":
        return replace_span(text, m.start(), m.end(), ""), f"clause: delete {m.group(1)}"
    if kind == "duplicate":
        return (replace_span(text, m.end(), m.end(), " " + m.group(0)),
                f"clause: duplicate {m.group(1)}")
    if kind == "rename":
        new = rng.choice(ROLES + ["bogus", "Q", "state", "gk", "accepted"])
        return (replace_span(text, m.start(1), m.end(1), new),
                f"clause: rename {m.group(1)} -> {new}")
    if kind == "rewire":
        other = rng.choice(cs)
        return (replace_span(text, m.start(2), m.end(2), other.group(2)),
                f"clause: {m.group(1)} takes {other.group(2)}")
    if kind == "swap":
        other = rng.choice(cs)
        if other.start() == m.start():
            return text, "clause: swap with itself"
        a, b = sorted([m, other], key=lambda x: x.start())
        text = replace_span(text, b.start(), b.end(), a.group(0))
        return (replace_span(text, a.start(), a.end(), b.group(0)),
                f"clause: swap {a.group(1)} and {b.group(1)}")
    if kind == "retype":
        other = rng.choice(cs)
        return (replace_span(text, m.start(3), m.end(3), other.group(3)),
                f"clause: {m.group(1)} typed as {other.group(1)}")
    return replace_span(text, m.start(), m.end(), f"{m.group(1)}()"), f"clause: empty {m.group(1)}"


def with_attr_dict(text):
    """(text, span of the op's attribute dictionary), adding an empty one
    after the last clause where there is none; span None without clauses."""
    span = attr_dict(text)
    if span is not None:
        return text, span
    cs = clauses(text)
    if not cs:
        return text, None
    pos = cs[-1].end()
    return replace_span(text, pos, pos, " {}"), (pos + 1, pos + 3)


def m_attr(rng, text):
    text, span = with_attr_dict(text)
    if span is None:
        return text, "attr: no op"
    body = text[span[0] + 1:span[1] - 1]
    items = [s.strip() for s in body.split(",") if s.strip()]
    kind = rng.choice(["delete-dict", "delete-one", "duplicate", "scale", "scale", "layout",
                       "bool", "bool", "unknown", "garbage", "schedule"])
    what = kind
    if kind == "delete-dict":
        return replace_span(text, span[0], span[1], ""), "attr: delete the dictionary"
    if kind == "delete-one" and items:
        what = "delete " + items.pop(rng.randrange(len(items)))
    elif kind == "duplicate" and items:
        it = rng.choice(items)
        items.append(it)
        what = "duplicate " + it
    elif kind == "scale":
        items = [i for i in items if not i.startswith("scale")]
        items.append("scale = " + rng.choice(SCALES))
        what = items[-1]
    elif kind == "layout":
        items = [i for i in items if not i.startswith("state_layout")]
        items.append("state_layout = " + rng.choice(LAYOUTS))
        what = items[-1]
    elif kind == "bool":
        name = rng.choice(BOOL_ATTRS)
        had = [i for i in items if i.split("=")[0].strip() == name]
        items = [i for i in items if i.split("=")[0].strip() != name]
        if not had or rng.random() < 0.5:
            items.append(rng.choice(BOOL_FORMS).format(name))
        what = f"{name}: " + (items[-1] if items and items[-1].startswith(name) else "removed")
    elif kind == "unknown":
        items.append(rng.choice(["foo", "scale_x = 1.0 : f32", "gdn.x = 1", "state_layout",
                                 "scale"]))
        what = "add " + items[-1]
    elif kind == "schedule":  # values past the attribute's edges, texts past its syntax
        r = rng.random()
        value = (SCHEDULES.schedule_attr(random_schedule(rng, 0.35, 0.3)) if r < 0.6
                 else rng.choice(SCHEDULE_TEXTS) if r < 0.85
                 else "{rows_per_warp = 2 : i64, warps_per_block = 1 : i64}")
        items.append("gdn.schedule = " + (value or "#gdn.schedule<>"))
        what = items[-1][:200]
    else:
        items.append(rng.choice(["=", ",", "= = =", "#gdn.", "#gdn.layout<", "@", "}"]))
        what = "garbage " + items[-1]
    return replace_span(text, span[0], span[1], "{" + ", ".join(items) + "}"), "attr: " + what


def m_truncate(rng, text):
    pos = rng.randrange(len(text) + 1)
    return text[:pos], f"truncate at {pos}/{len(text)}"


def m_bytes(rng, text):
    pos = rng.randrange(len(text) + 1)
    kind = rng.random()
    if kind < 0.4:
        junk = "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(1, 8)))
    elif kind < 0.7:
        # Raw bytes (surrogateescape writes them back as bytes).
        junk = "".join(chr(0xDC80 + rng.randrange(128)) if rng.random() < 0.5
                       else chr(rng.randrange(0, 32)) for _ in range(rng.randint(1, 8)))
    else:
        junk = rng.choice(["\x00", "\u00e9", "\U0001F600", "\ufeff", "%", "%%", "^bb0:",
                           "\"", "//", "/*", "}", "{", ">", "<", "x", "0x", "-", "e+99999"])
    return replace_span(text, pos, pos, junk), f"insert {junk!r} at {pos}"


def m_nesting(rng, text):
    opener, depth = rng.choice(NESTING)
    closer = {"(": ")", "tuple<": ">", "[": "]", "{": "}", "memref<": ">", "vector<1x": ">",
              "#gdn.layout<": ">", "\"": "\""}[opener]
    deep = opener * depth + (rng.choice(["f32", "", "1"]) + closer * depth
                             if rng.random() < 0.7 else "")
    where = rng.random()
    if where < 0.4:
        spans = shaped_spans(text)
        if spans:
            m = rng.choice(spans)
            return (replace_span(text, m.start(), m.end(), deep),
                    f"nesting: a type -> {opener!r} * {depth}")
    if where < 0.7:
        span = attr_dict(text)
        if span:
            return (replace_span(text, span[1] - 1, span[1] - 1, ", x = " + deep),
                    f"nesting: attribute {opener!r} * {depth}")
    pos = rng.randrange(len(text) + 1)
    return replace_span(text, pos, pos, deep), f"nesting: {opener!r} * {depth} at {pos}"


def m_lines(rng, text):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.choice(["delete", "duplicate", "swap"])
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines), f"line {i}: {kind}"


def m_int(rng, text):
    ints = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text))
    if not ints:
        return text, "int: none"
    m = rng.choice(ints)
    new = str(dim_edge(rng, int(m.group(0))))
    return replace_span(text, m.start(), m.end(), new), f"int {m.group(0)} -> {new}"


def m_structure(rng, text):
    span = op_span(text)
    kind = rng.choice(["dup-op", "dup-func", "no-return", "tensor", "strided", "affine",
                       "space", "drop-arg", "rename-func", "unknown-op", "dynamic",
                       "view", "view"])
    if kind == "dup-op" and span:
        op = text[span[0]:span[1]]
        return replace_span(text, span[1], span[1], "\n  " + op), "duplicate the op"
    if kind == "dup-func":
        return text + "\n" + text.replace("func.func @", "func.func @dup_", 1 if rng.random() < 0.5 else 0), \
            "duplicate the function"
    if kind == "no-return":
        return re.sub(r"\n\s*return\b", "\n", text, count=1), "delete the return"
    if kind == "tensor":
        return text.replace("memref<", "tensor<"), "memref -> tensor everywhere"
    if kind == "view":
        # A layout the op may accept (OperandLayouts.h): the dense strides
        # with the leading one (and, half the time, the next one) padded by
        # a multiple of the stride alignment, sometimes a static offset: a
        # view of a larger buffer, which gdn-run --check places at its
        # strides with poisoned gaps. Legal for token operands (and the
        # leading pad for states), a diagnostic for dense ones.
        spans = [m for m in shaped_spans(text) if len(parse_dims(m.group(2))[0]) >= 2]
        if not spans:
            return text, "view: none"
        m = rng.choice(spans)
        dims, et = parse_dims(m.group(2))
        if any(not str(d).isdigit() for d in dims):
            return text, "view: dynamic"
        dims = [int(d) for d in dims]
        width = {"f32": 4, "i32": 4, "i64": 8, "bf16": 2, "f16": 2}.get(et, 4)
        inner = dims[-1] or 1
        align = min(16 // width, inner & -inner)
        strides = [1] * len(dims)
        for i in range(len(dims) - 2, -1, -1):
            strides[i] = strides[i + 1] * dims[i + 1]
        strides[0] += align * rng.choice([1, 2, 64])
        if len(dims) >= 3 and rng.random() < 0.5:
            strides[1] += align * rng.choice([1, 3])
            strides[0] = max(strides[0], strides[1] * dims[1] + align)
            strides[0] += (-strides[0]) % align
        offset = rng.choice([0, 0, align, 3 * align])
        extra = f", strided<[{', '.join(map(str, strides))}]" + (
            f", offset: {offset}>" if offset else ">")
        new = f"{m.group(1)}<" + "".join(f"{d}x" for d in dims) + et + extra + ">"
        return text.replace(m.group(0), new), f"view: {m.group(0)} -> {new}"
    if kind in ("strided", "affine", "space", "dynamic"):
        spans = shaped_spans(text)
        if not spans:
            return text, kind + ": none"
        m = rng.choice(spans)
        dims, et = parse_dims(m.group(2))
        if kind == "dynamic":
            if not dims:
                return text, "dynamic: rank 0"
            dims[rng.randrange(len(dims))] = "?"
            extra = ""
        elif kind == "strided":
            strides = ", ".join(str(rng.choice([1, 0, 2, 7, "?"])) for _ in dims)
            extra = f", strided<[{strides}], offset: {rng.choice([0, 1, '?'])}>"
        elif kind == "affine":
            ds = ", ".join(f"d{i}" for i in range(len(dims)))
            rev = ", ".join(f"d{i}" for i in reversed(range(len(dims))))
            extra = f", affine_map<({ds}) -> ({rev})>"
        else:
            extra = f", {rng.choice([1, 3, 5, '#gpu.address_space<workgroup>'])}"
        new = f"{m.group(1)}<" + "".join(f"{d}x" for d in dims) + et + extra + ">"
        # The same type everywhere it is spelled (signature and op agree).
        return text.replace(m.group(0), new), f"{kind}: {m.group(0)} -> {new}"
    if kind == "drop-arg":
        args = list(re.finditer(r"(%[\w$.\-]+)\s*:\s*(?:memref|tensor)<[^<>]*>,?\s*", text))
        if args:
            m = rng.choice(args)
            return replace_span(text, m.start(), m.end(), ""), f"drop argument {m.group(1)}"
    if kind == "rename-func":
        return re.sub(r"func\.func @\w+", "func.func @" + rng.choice(["main", "x", "_", "gdn_recurrent", "\"q\""]),
                      text, count=1), "rename the function"
    if kind == "unknown-op" and span:
        return replace_span(text, span[0], span[0], rng.choice([
            "gdn.commit\n  ", "gdn.bogus\n  ", "\"gdn.recurrent\"() : () -> ()\n  ",
            "%x = arith.constant 0 : index\n  "])), "insert an op"
    return text, kind + ": not applicable"


def m_splice(rng, text, donors):
    """A clause from another seed file (a shape the op may not expect)."""
    donor = rng.choice(donors)
    cs_from, cs_to = clauses(donor), clauses(text)
    if not cs_from or not cs_to:
        return text, "splice: none"
    m, at = rng.choice(cs_from), rng.choice(cs_to)
    return replace_span(text, at.end(), at.end(), " " + m.group(0)), f"splice {m.group(1)}"


MUTATORS = [m_dim_one, m_dim_one, m_dim_all, m_dim_all, m_overflow, m_etype, m_etype, m_clause, m_clause,
            m_attr, m_attr, m_attr, m_truncate, m_bytes, m_nesting, m_lines, m_int,
            m_structure, m_structure, m_splice]


def g_dim(rng, text):
    dims = all_dims(text)
    if not dims:
        return text, "g-dim: none"
    old = rng.choice(dims)
    new = rng.choice([1, 2, 3, 5, old + 1, max(old - 1, 1), 2 * old, max(old // 2, 1)])
    return remap_dims(text, {old: new}), f"g-dim: every {old} -> {new}"


def g_etype(rng, text):
    floats = ["f32", "bf16", "f16"]
    present = sorted({parse_dims(m.group(2))[1] for m in shaped_spans(text)} & set(floats))
    if not present:
        return text, "g-etype: none"
    old, new = rng.choice(present), rng.choice(floats)

    def sub(m):
        dims, et = parse_dims(m.group(2))
        if et != old or (rng.random() < 0.3):
            return m.group(0)
        return f"{m.group(1)}<" + "".join(f"{d}x" for d in dims) + new + ">"
    return SHAPED.sub(sub, text), f"g-etype: {old} -> {new} (most)"


SCHEDULE_ATTR = re.compile(r"gdn\.schedule\s*=\s*(#gdn\.schedule<[^<>]*>|\{[^{}]*\})\s*,?\s*")


def g_attr(rng, text):
    text, span = with_attr_dict(text)
    if span is None:
        return text, "g-attr: no op"
    kind = rng.choice(["qk_l2norm", "allow_neg_eigval", "scale", "state_layout",
                       "gdn.schedule"])
    body = text[span[0] + 1:span[1] - 1]
    if kind == "gdn.schedule":  # one that the attribute takes, or none
        body = SCHEDULE_ATTR.sub("", body)
    items = [i.strip() for i in body.split(",") if i.strip()]
    keys = [i.split("=")[0].strip() for i in items]
    if kind == "gdn.schedule":
        params = random_schedule(rng, 0.35, 0)
        if params and rng.random() < 0.8:
            items.append("gdn.schedule = " + SCHEDULES.schedule_attr(params))
    elif kind in ("qk_l2norm", "allow_neg_eigval"):
        if kind in keys:
            items = [i for i, k in zip(items, keys) if k != kind]
        else:
            items.append(kind)
    elif kind == "scale":
        items = [i for i, k in zip(items, keys) if k != kind]
        items.append(f"scale = {rng.choice(['0.0', '-1.0', '0.5', '2.0', '1.0e-03', '-0.125'])} : f32")
    else:
        items = [i for i, k in zip(items, keys) if k != kind]
        if rng.random() < 0.5:
            items.append("state_layout = #gdn.layout<" + rng.choice(["kv", "vk"]) + ">")
    return (replace_span(text, span[0], span[1], "{" + ", ".join(items) + "}"),
            f"g-attr: {kind} -> {', '.join(items)}")


def g_tensor_form(rng, text):
    """The op in the tensor form (results final_state and o), as one-shot
    bufferization takes it."""
    cs = clauses(text)
    if not cs or "func.func" not in text:
        return text, "tensor-form: no op"
    types = {m.group(1): m.group(3).strip().replace("memref<", "tensor<") for m in cs}
    res = [types[r] for r in ("final_state", "o") if r in types]
    names = [f"%r{i}" for i in range(len(res))]
    text = text.replace("memref<", "tensor<")
    span = op_span(text)
    op = (", ".join(names) + " = " if names else "") + text[span[0]:span[1]].rstrip()
    if res:
        op += "\n      -> " + ", ".join(res)
    text = text[:span[0]] + op + text[span[1]:]
    text = re.sub(r"\n(\s*)return\b",
                  lambda m: f"\n{m.group(1)}return " + (f"{', '.join(names)} : {', '.join(res)}"
                                                        if res else ""), text, count=1)
    f = text.index("func.func")
    m = re.search(r"\)\s*\{", text[f:])
    if m and res:
        at = f + m.start() + 1
        text = text[:at] + " -> (" + ", ".join(res) + ")" + text[at:]
    return text, "tensor form"


GENTLE = [g_dim, g_dim, g_etype, g_attr, g_attr, g_tensor_form]


def mutate(rng, seeds):
    name, text = rng.choice(seeds)
    log = [os.path.relpath(name, ROOT)]
    if rng.random() < 0.4:  # gentle: mostly still valid, so it runs on odd shapes
        text = shrink(rng, text)
        log.append("shrink")
        for _ in range(rng.choice([1, 1, 2, 3])):
            text, what = rng.choice(GENTLE)(rng, text)
            log.append(what)
        return text, log
    if rng.random() < 0.7:
        text = shrink(rng, text)
        log.append("shrink")
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        fn = rng.choice(MUTATORS)
        text, what = (fn(rng, text, [t for _, t in seeds]) if fn is m_splice
                      else fn(rng, text))
        log.append(what)
    return text, log


def clause_dims(text, role):
    for m in clauses(text):
        if m.group(1) == role:
            t = SHAPED.search(m.group(3))
            if t:
                dims, _ = parse_dims(t.group(2))
                if all(isinstance(d, int) for d in dims):
                    return dims
    return None


def run_plan(text):
    """Whether `gdn-run --target=cpu --check` should run on this mutant: small
    enough to finish well inside the timeout, or so large (past
    --max-gib=1) that it must be refused at once."""
    sizes = []
    for m in shaped_spans(text):
        dims, _ = parse_dims(m.group(2))
        if all(isinstance(d, int) for d in dims):
            sizes.append(math.prod(dims) if dims else 1)
    biggest = max(sizes, default=0)
    if biggest >= 1 << 33:
        return True
    q, v = clause_dims(text, "q"), clause_dims(text, "v")
    if q and v and len(q) == 4 and len(v) == 4:
        work = q[0] * q[1] * v[2] * q[3] * v[3]
        return work <= 4e6 and biggest <= 4e6
    return biggest <= 4e6


def benign_for_check(text):
    """A FAILED check is a wrong result only where the inputs gdn-run draws
    stay in range: a scale of moderate size and L2-normalised q and k."""
    span = attr_dict(text)
    attrs = text[span[0]:span[1]] if span else ""
    if not re.search(r"\bqk_l2norm\b(?!\s*=\s*(false|0))", attrs):
        return False
    m = re.search(r"\bscale\s*=\s*([^,}\s]+)", attrs)
    if not m:
        return True
    try:
        s = m.group(1)
        x = int(s, 16) if s.lower().startswith("0x") else None
        val = (struct.unpack("<f", x.to_bytes(4, "little"))[0]
               if x is not None and x < 1 << 32 else float(s))
    except (ValueError, OverflowError):
        return False
    return math.isfinite(val) and abs(val) <= 1e4


def mlir_case(index, rng, ctx):
    text, log = mutate(rng, ctx.seeds)
    path = os.path.join(ctx.work, f"case-{index}.mlir")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    failures, rcs = mlir_commands(path, text, rng, ctx)
    outcome = ("ran" if rcs[-1] == 0 and len(rcs) == 5 else
               "verified" if rcs[0] == 0 else "rejected")
    if rng.random() < 0.3:  # the same text through the C API (gdnCompileText)
        case = dict(text=text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                    function=rng.choice([None, None, None, "decode", "bogus", ""]),
                    target=rng.choice(["cpu", "cuda"]))
        failures += worker_case(index, case, ctx, "compile_text")[0]
    if failures:
        keep = os.path.join(ctx.out, f"case-{index}.mlir")
        shutil.copy(path, keep)
        for f in failures:
            f.setdefault("reproducer", keep)
            f["mutations"] = log
            f["command"] = f["command"].replace(path, keep)
    os.unlink(path)
    if ctx.verbose:
        print(f"case {index}: {outcome}: {' / '.join(log)} {rcs}", flush=True)
    return "mlir", failures, outcome


OPTION_EDGES = [2**31, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**64, "abc", "", "1.5", "-0",
                "0x10", " 1"]
RUN_FLAGS = [  # gdn-run's other options, at and past their edges
    "--parents=random", "--parents=chain", "--parents=-1,0,0,1", "--parents=-1",
    "--parents=9223372036854775807,0", "--parents=-9223372036854775808", "--parents=x",
    "--parents=", "--parents=,,,", "--tol-o=0", "--tol-o=-1", "--tol-o=nan", "--tol-o=inf",
    "--tol-state=0", "--tol-state=1e308", "--iters=0", "--iters=1", "--iters=4294967296",
    "--seed=18446744073709551615", "--seed=-1", "--max-gib=0", "--max-gib=4294967295",
    "--function=bogus", "--function=", "--json", "--device=-1", "--device=2147483647",
    "--chip=sm_80", "--chip=bogus", "--emit=", "--target=", "--bench --iters=1"]


def random_schedule(rng, p, edges):
    """[(parameter, value)] of fuzz-schedules.py's table: each parameter with
    probability p, its value past the attribute's edges (the table's, or
    OPTION_EDGES) with probability `edges`."""
    params = []
    for name, values, past in SCHEDULES.PARAMETERS:
        if rng.random() < p:
            params.append((name, rng.choice(past + OPTION_EDGES) if rng.random() < edges
                           else rng.choice(values)))
    return params


def random_schedule_text(rng, p, edges):
    """A #gdn.schedule<...> text of random_schedule (None: no parameter
    drawn), or now and then one of SCHEDULE_TEXTS."""
    if rng.random() < edges / 2:
        return rng.choice(SCHEDULE_TEXTS)
    return SCHEDULES.schedule_attr(random_schedule(rng, p, edges)) or None


def schedule_flags(rng, p, edges):
    """Random gdn-run schedule arguments: FLAG_OPTIONS (--chip, --sm-count)
    and a --schedule (random_schedule_text), values past their edges with
    probability `edges`."""
    args = [f"--{n}={rng.choice(OPTION_EDGES) if rng.random() < edges else rng.choice(vals)}"
            for n, vals in FLAG_OPTIONS if rng.random() < p]
    text = random_schedule_text(rng, p, edges)
    if text is not None:
        args.append("--schedule=" + text)
    return args


def pass_options(args):
    """gdn-select-schedule's options of gdn-run's schedule_flags: chip=...,
    sm-count=..., schedule={...} (the braces hold the spaces and commas)."""
    return " ".join("schedule={" + a[len("--schedule="):] + "}" if a.startswith("--schedule=")
                    else a[2:] for a in args)


def mlir_commands(path, text, rng, ctx):
    opt, run = os.path.join(ctx.bin, "gdn-opt"), os.path.join(ctx.bin, "gdn-run")
    sched = schedule_flags(rng, 0.15, 0.1)
    pipeline = rng.choice(PIPELINES)
    if "tensor<" in text and rng.random() < 0.5:  # bufferized first, then lowered
        pipeline = [BUFFERIZE] + rng.choice([["--gdn-lower-to-cpu"], ["--gdn-lower-to-ptx"],
                                             ["--gdn-select-schedule", "--convert-gdn-to-gpu"],
                                             ["--canonicalize"]])
    elif rng.random() < 0.25:  # the pass's own options, past their edges too
        opts = pass_options(schedule_flags(rng, 0.3, 0.3))
        pipeline = [f"--gdn-select-schedule={opts}"] + rng.choice(
            [[], ["--convert-gdn-to-gpu"]])
    cmds = [[opt, path], [opt, "--gdn-lower-to-ptx", path],
            [opt] + pipeline + [path],
            [run, "--emit=ptx"] + sched + [path]]
    check_oracle = False
    if run_plan(text):
        extra = []
        if "retrieve_parent_token" in text and rng.random() < 0.4:
            extra = [rng.choice([f for f in RUN_FLAGS if f.startswith("--parents")] + [
                "--parents=" + ",".join(str(rng.choice([-1, 0, 1, 2, 3, 7, -9, 2**40]))
                                        for _ in range(rng.randint(1, 40)))])]
        elif rng.random() < 0.2:
            extra = rng.choice(RUN_FLAGS).split()
        cmds.append([run, "--target=cpu", "--check", "--max-gib=1",
                     f"--seed={rng.randrange(1 << 16)}"] + extra + [path])
        check_oracle = benign_for_check(text) and not extra
    failures, rcs = [], []
    for cmd in cmds:
        rc, out, err, _ = run_limited(cmd, env=ctx.env)
        rcs.append(rc)
        what = tool_verdict(rc, out, err, check_oracle and "--check" in cmd)
        if what:
            failures.append(dict(what=what, command=" ".join(shell_quote(c) for c in cmd),
                                 output=(out[-1500:] if "FAILED" in what else "")
                                 + err[-3000:]))
    return failures, rcs


def shell_quote(s):
    return s if re.fullmatch(r"[\w@%+=:,./\-]+", s) else "'" + s.replace("'", "'\\''") + "'"


# --------------------------------------------------------------------------
# (b) descriptors through the Python package.

DTYPE_NAMES = ["float32", "bfloat16", "float16"]
BAD_DTYPES = ["int8", "float64", "bf16", "", None, 0, 1.5, "FLOAT32", ["float32"]]
SIZE_EDGES = [0, -1, 1, 2, 3, 2**31 - 1, 2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1,
              -2**63, 2**63, 2**64, 4611686018427387905, 1 << 20, 4096]
# The 32-bit int fields of gdnRecurrentDesc set through compile() keywords
# (the GPU schedule is a text since ABI 4: SCHEDULE_EDGES).
INT_FIELDS_32 = ["sm_count"]
INT_EDGES_32 = [-1, -2, 0, 1, 2, 3, 2**31 - 1, -2**31, 2**31, 2**32 + 1, -2**63, 7, 9, 64]
BOOL_FIELDS = ["qk_l2norm", "initial_state", "final_state", "state_in_place",
               "allow_neg_eigval", "per_key_decay", "per_channel_beta"]
# Raw gdnRecurrentDesc fields (ctypes names) and values past their ranges.
RAW_FIELDS = {
    "struct_size": [0, 1, 8, 207, 4096, 2**32 - 1],
    "abi_version": [0, 1, 3, 2**32 - 1],
    "input_dtype": [-1, 3, 7, 2**31 - 1], "gate_dtype": [-1, 3, 100],
    "beta_dtype": [-1, 3], "state_dtype": [-1, 3, 99], "intermediate_dtype": [-1, 3],
    "decay": [-1, 3, 2**31 - 1], "beta": [-1, 3], "layout": [-1, 2, 17],
    "qk_l2norm": [2, -1, 2**31 - 1], "has_initial_state": [2, -7],
    "has_final_state": [3], "state_in_place": [5], "state_index_bits": [0, 8, 16, 33, 128, -32],
    "cu_seqlens_bits": [1, 16, 63, -64], "intermediate_index_bits": [8, 65, -1],
    "parent_index_bits": [16, 31, -32], "per_key_decay": [9], "per_channel_beta": [-3],
    "allow_neg_eigval": [4], "N": [-2**63, 2**63 - 1, -1, 0], "T": [0, -5, 2**62],
    "K": [0, -1, 2**40], "V": [0, 2**33], "num_slots": [-1, 2**62],
    "intermediate_rows": [-1, 2**62], "intermediate_steps": [-1, 0, 2**62],
    "scale": [math.inf, -math.inf, math.nan, 1e38, -0.0], "has_scale": [1, 1, 2, -1],
}
# compile(schedule=...) past its edges: texts that are no schedule, dicts
# whose names or values are no parameter or value, other types.
SCHEDULE_EDGES = SCHEDULE_TEXTS + [
    5, 1.5, True, b"#gdn.schedule<warps = 1>", ["warps", 1], ("warps", 1),
    {"warps": True}, {"warps": 1.5}, {"warps": "1"}, {"warps": " 1"}, {"warps": None},
    {"Warps": 1}, {"": 1}, {"warps x": 1}, {1: 1}, {"warps": 2**64}, {"warps": -2**63},
    {"reductions": "sideways"}, {"reductions": "in turn"}, {"reductions": "in_turn>"},
    {"launch": "programmatic, warps = 0"}, {"rows_per_warp": 2}, {"warps": 0},
]
# Raw schedule texts (the C field) that are no #gdn.schedule: a compile that
# succeeds with one of these is a failure.
RAW_BAD_SCHEDULES = [b"garbage", b"#gdn.schedule<warps = 0>", b"\xff\xfe",
                     b"#gdn.schedule<", b"{rows_per_warp = 2 : i64}",
                     b"#gdn.schedule<warps = 1> #gdn.schedule<>"]
RAW_FIELDS["schedule"] = RAW_BAD_SCHEDULES + [None, b"", b"#gdn.schedule<>",
                                              b"#gdn.schedule<warps = 1>"]
# Out-of-range enums: a compile that succeeds with one of these is a failure.
RAW_ENUMS = {"input_dtype": 3, "gate_dtype": 3, "beta_dtype": 3, "state_dtype": 3,
             "decay": 3, "beta": 3, "layout": 2}


def gen_desc(rng):
    """A descriptor case: {'kwargs': compile() keywords, 'raw': C fields
    to overwrite or None, 'run': run_host inputs or None}."""
    target = "cpu" if rng.random() < 0.6 else "cuda"
    N = rng.choice([1, 1, 2, 3, 4])
    T = rng.choice([1, 1, 2, 3, 4, 5])
    H = rng.choice([1, 1, 2])
    HV = H * rng.choice([1, 1, 2, 3])
    K = rng.choice([8, 16, 32, 32, 32, 64, 128, 24, 7])
    V = rng.choice([4, 8, 8, 16, 32, 3, 128])
    kw = dict(N=N, T=T, H=H, HV=HV, K=K, V=V)
    kw["input_dtype"] = rng.choice(DTYPE_NAMES)
    kw["decay"] = rng.choice(["none", "log_space", "fused_gating"])
    kw["beta"] = rng.choice(["one", "given", "logits"])
    # Mostly consistent combinations (each rule broken now and then).
    sometimes = lambda cond: cond or rng.random() < 0.05
    if sometimes(kw["decay"] != "none") and rng.random() < 0.6:
        kw["gate_dtype"] = rng.choice(DTYPE_NAMES)
    if sometimes(kw["beta"] != "one") and rng.random() < 0.4:
        kw["beta_dtype"] = rng.choice(DTYPE_NAMES)
    kw["qk_l2norm"] = rng.random() < 0.5
    kw["initial_state"] = rng.random() < 0.6
    kw["final_state"] = rng.random() < 0.6
    kw["state_in_place"] = sometimes(kw["initial_state"] and kw["final_state"]) and \
        rng.random() < 0.5
    kw["allow_neg_eigval"] = sometimes(kw["beta"] == "logits") and rng.random() < 0.4
    kw["per_key_decay"] = sometimes(kw["decay"] != "none") and rng.random() < 0.3
    kw["per_channel_beta"] = sometimes(kw["beta"] != "one") and rng.random() < 0.3
    kw["layout"] = rng.choice(["kv", "vk"])
    r = rng.random()
    kw["scale"] = (None if r < 0.4 else rng.choice([0.0, -1.0, 0.5, 2.0, 1e-3, -0.25, 1]))
    if rng.random() < 0.3:  # pool
        kw["num_slots"] = N + rng.choice([0, 0, 1, 2, 5])
        kw["state_index_dtype"] = rng.choice(["int32", "int64"])
        if not (kw["initial_state"] or kw["final_state"]) and rng.random() < 0.9:
            kw["initial_state"] = True
    if sometimes(kw["initial_state"] or kw["final_state"]) and rng.random() < 0.5:
        kw["state_dtype"] = rng.choice(DTYPE_NAMES)
    if rng.random() < 0.3:  # varlen: T counts every packed token
        kw["cu_seqlens_dtype"] = rng.choice(["int32", "int64"])
        kw["T"] = rng.randint(1, 10)
        if rng.random() < 0.15:
            kw["N"] = 0
    if rng.random() < 0.3:  # verify buffer
        pool_scoped = rng.random() < 0.5
        kw["intermediate_steps"] = (kw["T"] if "cu_seqlens_dtype" not in kw
                                    else rng.randint(1, kw["T"] + 1))
        if rng.random() < 0.1:
            kw["intermediate_steps"] = rng.randint(1, 6)
        kw["intermediate_rows"] = (kw["N"] + rng.choice([0, 1, 3]) if pool_scoped
                                   else kw["N"]) or 1
        if pool_scoped:
            kw["intermediate_index_dtype"] = rng.choice(["int32", "int64"])
        if rng.random() < 0.6:
            kw["intermediate_dtype"] = rng.choice(DTYPE_NAMES)
        if rng.random() < 0.5:
            kw["parent_index_dtype"] = rng.choice(["int32", "int64"])
    elif rng.random() < 0.03:
        kw["intermediate_dtype"] = rng.choice(DTYPE_NAMES)
    for name, vals in FLAG_OPTIONS:
        if rng.random() < 0.12:
            key = name.replace("-", "_")
            if key == "chip":
                kw["chip"] = rng.choice(vals + ["sm_100", "bogus", ""])
            else:
                kw[key] = rng.choice(vals)
    if rng.random() < 0.5:  # a schedule: a dict of parameters or its text
        params = random_schedule(rng, 0.12, 0.05)
        if params:
            kw["schedule"] = (dict(params) if rng.random() < 0.5
                              else SCHEDULES.schedule_attr(params))
    kw["target"] = target

    raw = None
    mode = rng.random()
    if mode < 0.25:  # out of range through the keywords
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            if kind < 0.25:
                kw[rng.choice(["N", "T", "H", "HV", "K", "V", "num_slots", "intermediate_rows",
                               "intermediate_steps"])] = rng.choice(SIZE_EDGES)
            elif kind < 0.35:  # each size fits, their products overflow 64 bits
                for name in rng.sample(["N", "T", "H", "HV", "K", "V", "num_slots",
                                        "intermediate_rows", "intermediate_steps"],
                                       rng.randint(2, 4)):
                    kw[name] = rng.choice([2**16, 2**21, 2**31, 2**32, 2**33, 2**62])
            elif kind < 0.5:
                kw[rng.choice(["input_dtype", "gate_dtype", "beta_dtype", "state_dtype",
                               "intermediate_dtype", "state_index_dtype", "cu_seqlens_dtype",
                               "intermediate_index_dtype", "parent_index_dtype"])] = \
                    rng.choice(BAD_DTYPES)
            elif kind < 0.6:
                kw[rng.choice(["decay", "beta", "layout", "target"])] = rng.choice(
                    ["bogus", "", None, 0, "KV", "cuda ", "rocm"])
            elif kind < 0.75:
                if rng.random() < 0.5:
                    kw[rng.choice(INT_FIELDS_32)] = rng.choice(INT_EDGES_32)
                else:
                    kw["schedule"] = rng.choice(SCHEDULE_EDGES)
            elif kind < 0.85:
                kw["scale"] = rng.choice([float("inf"), float("nan"), -float("inf"), 1e38,
                                          3.5e38, 1e-45, "1.0", True, 10**400, -1e300])
            elif kind < 0.92:
                kw[rng.choice(BOOL_FIELDS)] = rng.choice([2, -1, None, "", "no", 0.5])
            else:
                kw["chip"] = rng.choice(["sm_90a", "sm_80", "sm_10", "sm_", "x" * 300,
                                         "sm_90a\x00", "sm_1000", "compute_90"])
    elif mode < 0.35:  # raw C fields
        raw = {}
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(sorted(RAW_FIELDS))
            raw[name] = rng.choice(RAW_FIELDS[name])

    run = None
    scale = kw.get("scale")
    moderate = scale is None or (isinstance(scale, (int, float)) and abs(scale) <= 1e4)
    if target == "cpu" and raw is None and moderate and small(kw):
        run = gen_run(rng, kw)
    return dict(kwargs=kw, raw=raw, run=run)


def small(kw):
    try:
        N, T, HV, K, V = (int(kw[k]) for k in ("N", "T", "HV", "K", "V"))
        rows = max(N, int(kw.get("num_slots", 0)), int(kw.get("intermediate_rows", 0)))
        steps = int(kw.get("intermediate_steps", 0)) or 1
    except (TypeError, ValueError):
        return False
    return (0 <= N <= 8 and 1 <= T <= 16 and 1 <= HV <= 16 and 1 <= K <= 256 and 1 <= V <= 256
            and max(N, 1) * T * HV * K * V <= 1 << 20 and rows * steps * HV * K * V <= 1 << 21)


def gen_run(rng, kw):
    """The index tables of a run (explicit, so the reproducer holds them)."""
    N, T = kw["N"], kw["T"]
    run = dict(seed=rng.randrange(1 << 30), nan_unused=rng.random() < 0.5)
    if kw.get("cu_seqlens_dtype"):
        mode = rng.choice(["valid", "valid", "valid", "wild"])
        if mode == "valid":
            cuts = sorted(rng.randint(0, T) for _ in range(max(N - 1, 0)))
            end = rng.choice([T, T, rng.randint(0, T)])
            cu = [0] + [min(c, end) for c in cuts] + [end] if N else [0]
        else:
            big = 2**31 - 1 if kw["cu_seqlens_dtype"] == "int32" else 2**62
            small_ = -2**31 if kw["cu_seqlens_dtype"] == "int32" else -2**63
            pool = [0, 1, T - 1, T, T + 1, T + 5, -1, -3, big, small_, rng.randint(0, T)]
            cu = [rng.choice(pool) for _ in range(N + 1)]
        run["cu_seqlens"] = cu
    slots = max(int(kw.get("num_slots", 0)), 0)
    if slots:
        perm = list(range(slots))
        rng.shuffle(perm)
        neg = [-1, -1, -2, -7, -2**31] + ([-2**63] if kw.get("state_index_dtype") == "int64"
                                          else [])
        run["state_indices"] = [perm[n] if n < slots and rng.random() < 0.75 else rng.choice(neg)
                                for n in range(N)]
    if kw.get("intermediate_index_dtype"):
        rows = kw.get("intermediate_rows", 0)
        perm = list(range(max(rows, 0)))
        rng.shuffle(perm)
        run["intermediate_state_indices"] = [
            perm[n] if n < len(perm) and rng.random() < 0.75 else rng.choice([-1, -5, -2**31])
            for n in range(N)]
    if kw.get("parent_index_dtype"):
        steps = kw.get("intermediate_steps", 0)
        big = 2**31 - 1 if kw["parent_index_dtype"] == "int32" else 2**62
        run["parents"] = [[(-1 if s == 0 else rng.randint(0, s - 1)) if rng.random() < 0.8
                           else rng.choice([-1, -2, s, s + 1, big, -big, s - 1])
                           for s in range(steps)] for _ in range(N)]
    return run


def worker_case(index, case, ctx, label):
    """Runs `case` in a worker process: (failures, outcome)."""
    text = repr(case)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"]
    rc, out, err, _ = run_limited(cmd, stdin=text.encode(), env=ctx.env)
    what = crash_verdict(rc, err, allowed=(0,))
    result = None
    for line in out.splitlines():
        if line.startswith(RESULT_TAG):
            result = json.loads(line[len(RESULT_TAG):])
    if not what:
        if result is None:
            what = "the worker printed no result"
        elif result["status"] not in ("ok", "refused", "compiled"):
            what = result["status"]
    summary = (result or {}).get("status", "?")
    if ctx.verbose:
        print(f"case {index} ({label}): {summary}: {(result or {}).get('detail', '')[:300]}",
              flush=True)
    if not what:
        return [], summary
    keep = os.path.join(ctx.out, f"case-{index}.py")
    with open(keep, "w") as f:
        f.write(f"# fuzz-inputs case {index} ({label}): {what}\n"
                f"# replay: scripts/fuzz-inputs.py --replay {keep}\n"
                f"case = {text}\n")
    detail = ((result or {}).get("detail", "") + "\n" + err[-3000:]).strip()
    shown = text if len(text) < 3000 else text[:1500] + " ... " + text[-200:]
    return [dict(what=what, command=f"scripts/fuzz-inputs.py --replay {keep}",
                 output=detail, reproducer=keep, case=shown)], summary


CACHE_DIRS = ["file", "/dev/full", "/proc/self/gdn", "/dev/null/x", "long", "fifo-entries",
              "dir-entries", "readonly"]


def desc_case(index, rng, ctx):
    case = gen_desc(rng)
    if case["kwargs"].get("target") == "cuda" and case["raw"] is None and rng.random() < 0.3:
        # The disk cache: entries corrupted between two compilers, or a
        # cache directory that cannot hold them.
        if rng.random() < 0.7:
            case["cache"] = dict(corrupt=[(rng.choice(["truncate", "flip", "garbage", "json",
                                                      "empty", "fifo", "dir", "symlink"]),
                                           rng.random(), rng.randrange(256))
                                          for _ in range(rng.randint(1, 3))])
        else:
            case["cache"] = dict(directory=rng.choice(CACHE_DIRS))
    case["misuse"] = rng.random() < 0.2
    failures, summary = worker_case(index, case, ctx, "desc")
    return "desc", failures, summary


# --------------------------------------------------------------------------
# The worker: one descriptor case, in its own process.

def worker(text):
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    case = eval(text, {"inf": math.inf, "nan": math.nan})  # our own repr()
    import gdn
    from gdn import _capi
    import ctypes

    def report(status, detail=""):
        print(RESULT_TAG + json.dumps(dict(status=status, detail=detail)), flush=True)

    allowed = (gdn.GDNError, ValueError, TypeError, NotImplementedError)
    if "text" in case:  # a .mlir mutant through gdnCompileText
        try:
            kern = gdn.Compiler().compile_text(case["text"], function=case["function"],
                                               target=case["target"])
        except allowed as e:
            return report("refused", f"{type(e).__name__}: {e}"[:2000])
        except Exception:
            return report("non-GDNError exception", traceback.format_exc())
        if case["target"] == "cuda" and kern.ptx is None:
            return report("CUDA kernel without PTX")
        return report("compiled", repr(kern.arguments))
    kw = dict(case["kwargs"])
    cache = case.get("cache")
    if cache:
        return cache_case(case, kw, gdn, report, allowed)
    c = gdn.Compiler()
    try:
        if case["raw"] is None:
            kern = c.compile(**kw)
        else:
            kern = compile_raw(c, kw, case["raw"], gdn, _capi, ctypes)
    except allowed as e:
        return report("refused", f"{type(e).__name__}: {e}")
    except Exception:
        return report("non-GDNError exception", traceback.format_exc())
    if case["raw"] is not None:
        bad = [f for f, v in case["raw"].items()
               if (f in RAW_ENUMS and not 0 <= v < RAW_ENUMS[f] and
                   (f != "intermediate_dtype" or kw.get("intermediate_rows", 0) > 0))
               or (f == "struct_size" and v != ctypes.sizeof(_capi.RecurrentDesc))
               or (f == "abi_version" and v != _capi.ABI_VERSION)
               or (f == "schedule" and v in RAW_BAD_SCHEDULES)
               or (f == "scale" and not math.isfinite(v) and
                   (case["raw"].get("has_scale", kw.get("scale") is not None)))]
        if bad:
            return report("accepted an invalid descriptor", f"raw fields {bad} compiled")
        return report("compiled")
    # N = 0 (varlen) launches nothing: its PTX is empty.
    if kw.get("target") == "cuda" and kw.get("N") != 0 and ".entry" not in (kern.ptx or ""):
        return report("CUDA kernel without PTX", repr((kern.ptx or "")[:200]))
    if case.get("misuse"):
        problem = misuse(np, kern, kw.get("target"), kw.get("N") == 0, allowed, ctypes)
        if problem:
            return report(*problem)
    if case["run"] is None:
        return report("compiled")
    try:
        with np.errstate(all="ignore"):
            problems = run_and_compare(np, kern, kw, case["run"])
    except RunError as e:
        cause = e.__cause__
        if isinstance(cause, allowed):
            return report("refused", f"run_host: {type(cause).__name__}: {cause}")
        return report("non-GDNError exception",
                      "".join(traceback.format_exception(type(cause), cause,
                                                         cause.__traceback__)))
    except Exception:
        return report("fuzzer error", traceback.format_exc())
    if problems:
        return report("silent wrong result", "\n".join(problems))
    return report("ok")


def misuse(np, kern, target, empty, allowed, ctypes):
    """A kernel used the wrong way: a CPU kernel launched, a CUDA kernel run
    on the host or launched without a GPU (unless it has nothing to launch),
    too few arguments. Each must be a Python exception; (status, detail) of
    the first that is not, else None."""
    try:
        ctypes.CDLL("libcuda.so.1")
        has_driver = True
    except OSError:
        has_driver = False
    n = len(kern.arguments)
    small = sum(b for _, b in kern.arguments) <= 1 << 26
    calls = [("too few arguments", lambda: kern.run_host([]))]
    if target == "cpu":
        calls.append(("a CPU kernel launched", lambda: kern.launch([16] * n)))
    elif small:
        bufs = [np.zeros(b, np.uint8) for _, b in kern.arguments]
        calls.append(("a CUDA kernel run on the host", lambda: kern.run_host(bufs)))
    if target == "cuda" and not has_driver and not empty:  # N = 0 launches nothing
        calls.append(("a launch without a CUDA driver", lambda: kern.launch([16] * n)))
    for what, call in calls:
        try:
            call()
        except allowed:
            continue
        except Exception:
            return ("non-GDNError exception", f"{what}: " + traceback.format_exc())
        return ("misuse accepted", f"{what}: no error")
    return None


def cache_case(case, kw, gdn, report, allowed):
    """Compiles twice through a private disk cache: with its entries
    corrupted in between (the second compile must give the same kernel), or
    with a cache directory that cannot hold entries (a compile that works)."""
    # Under the run's work directory (removed with it, even after a kill).
    tmp = tempfile.mkdtemp(prefix="gdn-cache-",
                           dir=os.path.dirname(os.environ.get("GDN_CACHE_DIR", "")) or None)
    try:
        cache = case["cache"]
        d = cache.get("directory")
        path = os.path.join(tmp, "cache")
        if d == "file":
            open(path, "w").write("not a directory")
        elif d == "long":
            path = os.path.join(tmp, *(["x" * 200] * 30))
        elif d == "readonly":
            os.makedirs(path)
            os.chmod(path, 0o500)
        elif d == "fifo-entries" or d == "dir-entries":
            os.makedirs(path)
        elif d:
            path = d
        os.environ["GDN_CACHE_DIR"] = path
        try:
            first = gdn.Compiler().compile(**kw)
        except allowed as e:
            return report("refused", f"{type(e).__name__}: {e}")
        except Exception:
            return report("non-GDNError exception", traceback.format_exc())
        entries = sorted(glob.glob(os.path.join(path, "*.json"))) if os.path.isdir(path) else []
        if d in ("fifo-entries", "dir-entries"):
            # Every name the second compiler might read is a FIFO or a directory.
            for e in entries:
                os.unlink(e)
                os.mkfifo(e) if d == "fifo-entries" else os.mkdir(e)
        for e in entries:
            for op, frac, byte in cache.get("corrupt", []):
                if not os.path.isfile(e) or os.path.islink(e):
                    break
                data = open(e, "rb").read()
                at = int(frac * len(data))
                if op == "truncate":
                    data = data[:at]
                elif op == "flip" and data:
                    data = data[:at] + bytes([data[min(at, len(data) - 1)] ^ (byte or 1)]) + \
                        data[min(at, len(data) - 1) + 1:]
                elif op == "garbage":
                    data = bytes((byte * 7 + i) % 256 for i in range(at + 1))
                elif op == "json":
                    try:
                        obj = json.loads(data)
                        key = sorted(obj)[byte % len(obj)]
                    except (ValueError, TypeError, ZeroDivisionError):
                        continue  # not an object any more (an earlier op)
                    obj[key] = [None, -1, 2**40, "", [], {}, True, 0, [1, 1, 1]][byte % 9]
                    data = json.dumps(obj).encode()
                elif op == "empty":
                    data = b""
                if op == "fifo":
                    os.unlink(e)
                    os.mkfifo(e)
                elif op == "dir":
                    os.unlink(e)
                    os.mkdir(e)
                elif op == "symlink":
                    os.unlink(e)
                    os.symlink("/dev/zero", e)
                else:
                    open(e, "wb").write(data)
        try:
            second = gdn.Compiler().compile(**kw)
        except allowed as e:
            return report("refused on the second compile", f"{type(e).__name__}: {e}")
        except Exception:
            return report("non-GDNError exception", traceback.format_exc())
        if second.ptx != first.ptx or second.arguments != first.arguments:
            return report("the cache served another kernel",
                          f"{len(entries)} entries; PTX {len(first.ptx or '')} vs "
                          f"{len(second.ptx or '')} chars")
        return report("compiled", f"{len(entries)} cache entries")
    finally:
        for root, dirs, _ in os.walk(tmp):
            for x in dirs:
                os.chmod(os.path.join(root, x), 0o700)
        shutil.rmtree(tmp, ignore_errors=True)


def compile_raw(c, kw, raw, gdn, _capi, ctypes):
    """compile(), with some C fields overwritten after the keywords set them."""
    real = _capi.lib.gdnCompileDesc

    class Shim:
        def __getattr__(self, name):
            return getattr(_capi.lib, name)

        def gdnCompileDesc(self, h, pdesc, target, chip, pkernel):
            d = pdesc._obj
            for f, v in raw.items():
                t = dict(_capi.RecurrentDesc._fields_)[f]
                setattr(d, f, t(v).value)  # wraps to the field's width, as C would
            return real(h, pdesc, target, chip, pkernel)
    old = gdn.lib
    gdn.lib = Shim()
    try:
        return c.compile(**kw)
    finally:
        gdn.lib = old


# numpy has no bfloat16: bf16 arrays are uint16 holding the high half of f32.
def to_bf16(np, x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(np.asarray(x, np.float32)), np.uint16(0x7FC0), r)


def from_bf16(np, u):
    return (np.asarray(u, np.uint16).astype(np.uint32) << 16).view(np.float32)


class RunError(Exception):
    """An exception from Kernel.run_host (its __cause__)."""


class Store:
    """One dtype's storage: encode from fp64, decode to fp64, round."""

    def __init__(self, np, name):
        self.np, self.name = np, name
        self.np_type = {"float32": np.float32, "float16": np.float16,
                        "bfloat16": np.uint16}[name]
        self.tol = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 4e-3}[name]

    def encode(self, x):
        if self.name == "bfloat16":
            return to_bf16(self.np, x)
        return self.np.asarray(x).astype(self.np_type)

    def decode(self, a):
        np = self.np
        if self.name == "bfloat16":
            return from_bf16(np, a).astype(np.float64)
        return np.asarray(a).astype(np.float64)

    def round(self, x):
        return self.decode(self.encode(x))

    def nan(self, shape):
        return self.encode(self.np.full(shape, self.np.nan))


def rms_rel(np, x, ref, tol):
    """The RMS-relative error of x (as gdn-run --check), or inf where one
    element is off by more than 20 tol of the largest reference value (an
    error the RMS over many elements would hide)."""
    x, ref = np.asarray(x, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    if x.size == 0:
        return 0.0
    if not np.isfinite(x).all():
        return math.inf
    nr, mr = np.linalg.norm(ref), np.abs(ref).max()
    if nr == 0:
        return float(np.linalg.norm(x))
    if np.abs(x - ref).max() > 20 * tol * mr:
        return math.inf
    return float(np.linalg.norm(x - ref) / nr)


def run_and_compare(np, kern, kw, run):
    """Runs the kernel on random inputs and returns the differences from the
    fp64 reference (empty: ok)."""
    from reference import recurrent
    rng = np.random.default_rng(run["seed"])
    N, T, H, HV, K, V = (int(kw[k]) for k in ("N", "T", "H", "HV", "K", "V"))
    varlen = bool(kw.get("cu_seqlens_dtype"))
    B = 1 if varlen else N
    layout = kw.get("layout", "kv")
    decay, beta = kw.get("decay", "none"), kw.get("beta", "one")
    per_key, per_ch = bool(kw.get("per_key_decay")), bool(kw.get("per_channel_beta"))
    inp = Store(np, kw.get("input_dtype", "bfloat16"))
    gate = Store(np, kw.get("gate_dtype", "float32"))
    bst = Store(np, kw.get("beta_dtype") or kw.get("gate_dtype", "float32"))
    sst = Store(np, kw.get("state_dtype", "float32"))
    ist = Store(np, kw.get("intermediate_dtype", "float32"))
    ints = lambda name: {"int32": np.int32, "int64": np.int64}[name]
    slots = int(kw.get("num_slots", 0))
    S_rows = slots if slots > 0 else N
    rows = int(kw.get("intermediate_rows", 0))
    steps = int(kw.get("intermediate_steps", 0))
    sshape = (S_rows, HV, V, K) if layout == "vk" else (S_rows, HV, K, V)
    ishape = ((rows, steps, HV, V, K) if layout == "vk" else (rows, steps, HV, K, V))
    has_init, has_final = bool(kw.get("initial_state")), bool(kw.get("final_state"))
    in_place = bool(kw.get("state_in_place"))

    # Which tokens each sequence owns (clamped as GDNOps.td says).
    if varlen:
        cu = [int(x) for x in run["cu_seqlens"]]
        ranges = []
        for n in range(N):
            lo = min(max(cu[n], 0), T)
            hi = min(max(cu[n + 1], lo), T)
            ranges.append((0, lo, hi))
    else:
        ranges = [(n, 0, T) for n in range(N)]
    owners = np.zeros((B, T), np.int64)
    for b, lo, hi in ranges:
        owners[b, lo:hi] += 1
    slot_of = list(run.get("state_indices", range(N)))
    iidx = run.get("intermediate_state_indices")
    row_of = [(n if iidx is None else int(iidx[n])) for n in range(N)]

    def randn(shape, s=1.0):
        return rng.standard_normal(shape) * s

    # Inputs, tokens nobody owns NaN (they must not be read).
    unread = (owners == 0)

    def token_input(store, shape, values):
        x = values.copy()
        x[unread] = np.nan
        return store.encode(x)

    qk_s = 1.0 / math.sqrt(K)
    arrays = {}
    arrays["q"] = token_input(inp, (B, T, H, K), randn((B, T, H, K), qk_s))
    arrays["k"] = token_input(inp, (B, T, H, K), randn((B, T, H, K), qk_s))
    arrays["v"] = token_input(inp, (B, T, HV, V), randn((B, T, HV, V)))
    gshape = (B, T, HV, K) if per_key else (B, T, HV)
    if decay == "log_space":
        arrays["g"] = token_input(gate, gshape, np.log(rng.uniform(0.5, 1.0, gshape)))
    if decay == "fused_gating":
        arrays["a"] = token_input(gate, gshape, randn(gshape))
        arrays["A_log"] = np.log(rng.uniform(1, 16, HV)).astype(np.float32)
        arrays["dt_bias"] = randn(HV * K if per_key else HV).astype(np.float32)
    bshape = (B, T, HV, V) if per_ch else (B, T, HV)
    if beta == "given":
        arrays["beta"] = token_input(bst, bshape, rng.uniform(0, 1, bshape))
    if beta == "logits":
        arrays["b"] = token_input(bst, bshape, randn(bshape))
    if slots:
        arrays["state_indices"] = np.array(run["state_indices"],
                                           ints(kw.get("state_index_dtype", "int32")))
    if varlen:
        arrays["cu_seqlens"] = np.array(run["cu_seqlens"], ints(kw["cu_seqlens_dtype"]))
    if iidx is not None:
        arrays["intermediate_state_indices"] = np.array(iidx, ints(kw["intermediate_index_dtype"]))
    if "parents" in run:
        arrays["retrieve_parent_token"] = np.array(run["parents"],
                                                   ints(kw["parent_index_dtype"])).reshape(N, steps)
    used = {int(slot_of[n]) for n in range(N) if int(slot_of[n]) >= 0}
    s0 = randn(sshape, 0.5)
    if run.get("nan_unused") and slots:
        for s in range(S_rows):
            if s not in used:
                s0[s] = np.nan
    init = sst.encode(s0)
    if in_place:
        arrays["state"] = init.copy()
    elif has_init:
        arrays["initial_state"] = init.copy()
    if rows > 0:
        arrays["intermediate_states"] = ist.nan(ishape)
    if has_final and not in_place:
        arrays["final_state"] = sst.nan(sshape)
    arrays["o"] = inp.nan((B, T, HV, V))

    problems = []
    names = [n for n, _ in kern.arguments]
    for name, nbytes in kern.arguments:
        if name not in arrays:
            return [f"kernel argument '{name}' not expected from GDN.h for {kw}"]
        if arrays[name].nbytes != nbytes:
            return [f"argument '{name}': GDN.h's shape {arrays[name].shape} is "
                    f"{arrays[name].nbytes} bytes, the kernel wants {nbytes}"]
    if set(names) != set(arrays):
        return [f"kernel arguments {names}, GDN.h says {sorted(arrays)}"]
    before = {n: a.copy() for n, a in arrays.items()}
    try:
        kern.run_host([arrays[n] for n in names])
    except Exception as e:
        raise RunError() from e

    # Reference: token by token per sequence (trees reload stored states).
    dec = {n: (inp if n in "qkvo" else gate if n in ("g", "a") else bst).decode(before[n])
           for n in ("q", "k", "v", "g", "a", "beta", "b") if n in before}
    scale = kw.get("scale")
    scale = K ** -0.5 if scale is None else float(np.float32(scale))
    s0d = sst.decode(init)
    if layout == "vk":
        s0d = np.swapaxes(s0d, -1, -2)  # to [.., K, V]
    ro = np.zeros((B, T, HV, V))
    ro_mask = np.zeros((B, T), bool)   # tokens whose o is compared
    zero_mask = np.zeros((B, T), bool)  # tokens of padding rows: o exactly 0
    final_ref, inter_ref = {}, {}
    tree = "parents" in run
    for n, (b, lo, hi) in enumerate(ranges):
        slot = int(slot_of[n])
        if slot < 0:
            zero_mask[b, lo:hi] = True
            continue
        S0 = s0d[slot] if has_init else np.zeros((HV, K, V))
        S = S0.copy()
        row = row_of[n]
        has_row = rows > 0 and row >= 0
        stored = []
        for i, t in enumerate(range(lo, hi)):
            if i > 0 and tree and has_row and i < steps:
                p = int(run["parents"][n][i])
                if p != i - 1:
                    S = ist.round(stored[p]) if 0 <= p < i - 1 else S0.copy()
            one = lambda x: None if x is None else x[b:b + 1, t:t + 1]
            o1, S1 = recurrent(one(dec["q"]), one(dec["k"]), one(dec["v"]),
                               g=one(dec.get("g")), a=one(dec.get("a")),
                               A_log=arrays.get("A_log"), dt_bias=arrays.get("dt_bias"),
                               beta=one(dec.get("beta")), b=one(dec.get("b")),
                               initial_state=S[None], scale=1.0,
                               qk_l2norm=bool(kw.get("qk_l2norm")), layout="kv",
                               allow_neg_eigval=bool(kw.get("allow_neg_eigval")))
            S = S1[0]
            ro[b, t] = scale * o1[0, 0]
            if i < steps:
                stored.append(S.copy())
        ro_mask[b, lo:hi] = True
        final_ref[slot] = S
        if has_row:
            inter_ref[row] = stored
    multi = owners > 1
    ro_mask &= ~multi
    zero_mask &= ~multi
    loose = tree and ist.name != "float32"
    tol_o = 1e-2 if loose else 2e-3
    flip = (lambda x: np.swapaxes(x, -1, -2)) if layout == "vk" else (lambda x: x)

    o = inp.decode(arrays["o"])
    if ro_mask.any():
        err = rms_rel(np, o[ro_mask], inp.round(ro[ro_mask]), tol_o)
        if not err <= tol_o:
            problems.append(f"o: rms-rel {err:.3e} > {tol_o} over the owned tokens")
    if zero_mask.any() and not (o[zero_mask] == 0).all():
        problems.append("o: padding rows are not zero")
    if (owners == 0).any():
        if not np.array_equal(arrays["o"][owners == 0].view(np.uint8),
                              before["o"][owners == 0].view(np.uint8)):
            problems.append("o: tokens no sequence owns were written")
    # Inputs never change (in-place state aside).
    for name in arrays:
        if name in ("o", "state", "final_state", "intermediate_states"):
            continue
        if not np.array_equal(arrays[name].view(np.uint8), before[name].view(np.uint8)):
            problems.append(f"input '{name}' was modified")
    # States.
    out_name = "state" if in_place else ("final_state" if has_final else None)
    tol_s = max(sst.tol, 1e-2 if loose else 0)
    if out_name:
        got = arrays[out_name]
        for s in range(S_rows):
            if s in final_ref:
                err = rms_rel(np, sst.decode(got[s]), flip(final_ref[s]), tol_s)
                if not err <= tol_s:
                    problems.append(f"{out_name}[{s}]: rms-rel {err:.3e} > {tol_s}")
            elif not np.array_equal(got[s].view(np.uint8), before[out_name][s].view(np.uint8)):
                problems.append(f"{out_name}[{s}]: a slot no sequence uses was written")
    if rows > 0:
        got = arrays["intermediate_states"]
        tol_i = max(ist.tol, 1e-2 if loose else 0)
        for r in range(rows):
            if r in inter_ref:  # a sequence's row: its first steps compared
                st = inter_ref[r]
                if st:
                    err = rms_rel(np, ist.decode(got[r, :len(st)]), flip(np.array(st)), tol_i)
                    if not err <= tol_i:
                        problems.append(f"intermediate_states[{r}]: rms-rel {err:.3e} > {tol_i}")
            elif not np.array_equal(got[r].view(np.uint8),
                                    before["intermediate_states"][r].view(np.uint8)):
                problems.append(f"intermediate_states[{r}]: a row no sequence owns was written")
    return problems


# --------------------------------------------------------------------------
# Driver.

class Context:
    pass


def main():
    global TIMEOUT_S
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60, help="time budget (default 60)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None, help="where reproducers go (default: a temp dir)")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=TIMEOUT_S,
                   help=f"seconds a command may run (default {TIMEOUT_S})")
    p.add_argument("--cases", type=int, default=0, help="run exactly this many cases")
    p.add_argument("--only", choices=["mlir", "desc"], default=None)
    p.add_argument("--replay", default=None, help="a saved case-N.mlir or case-N.py")
    p.add_argument("--verbose", action="store_true", help="print every case")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    TIMEOUT_S = a.timeout
    if a.worker:
        try:
            worker(sys.stdin.read())
        except Exception:
            print(RESULT_TAG + json.dumps(dict(status="fuzzer error",
                                               detail=traceback.format_exc())), flush=True)
        return 0

    ctx = Context()
    ctx.bin = os.path.abspath(a.bin)
    ctx.verbose = a.verbose
    if a.replay:
        ctx.out = None
        ctx.work = tempfile.mkdtemp(prefix="fuzz-inputs-replay-")
    else:
        ctx.out = os.path.abspath(a.out or tempfile.mkdtemp(prefix="fuzz-inputs-"))
        os.makedirs(ctx.out, exist_ok=True)
        # Reproducers of an earlier run would read as this one's.
        for old in glob.glob(os.path.join(ctx.out, "case-*.mlir")) + \
                glob.glob(os.path.join(ctx.out, "case-*.py")):
            os.unlink(old)
        ctx.work = tempfile.mkdtemp(prefix="work-", dir=ctx.out)
    env = dict(os.environ)
    env.setdefault("GDN_LIBRARY", os.path.join(os.path.dirname(ctx.bin), "lib",
                                               "libGDNCAPI.so"))
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["GDN_CACHE_DIR"] = os.path.join(ctx.work, "cache")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # numpy's thread buffers stay far below the memory limit
    ctx.env = env
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")) +
                   glob.glob(os.path.join(ROOT, "bench", "sweeps", "*.mlir")))
    ctx.seeds = [(f, open(f).read()) for f in files]

    for tool in ("gdn-opt", "gdn-run"):
        if not os.access(os.path.join(ctx.bin, tool), os.X_OK):
            print(f"fuzz-inputs: error: no {tool} in {ctx.bin} (--bin)", file=sys.stderr)
            return 2
    if not os.path.exists(env["GDN_LIBRARY"]):
        print(f"fuzz-inputs: error: no {env['GDN_LIBRARY']} (GDN_LIBRARY)", file=sys.stderr)
        return 2
    if a.replay:
        try:
            return replay(a.replay, ctx)
        finally:
            shutil.rmtree(ctx.work, ignore_errors=True)

    t0 = time.time()
    lock = threading.Lock()
    results = {}

    def one(i):
        rng = random.Random(f"{a.seed}:{i}")
        kind = a.only or ("mlir" if rng.random() < 0.5 else "desc")
        try:
            r = (mlir_case if kind == "mlir" else desc_case)(i, rng, ctx)
        except Exception:
            r = (kind, [dict(what="fuzzer error", command="", output=traceback.format_exc(),
                             reproducer=f"--seed {a.seed} case {i}")], "")
        with lock:
            results[i] = r
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        pending, i = set(), 0
        while True:
            more = (i < a.cases) if a.cases else (time.time() - t0 < a.seconds)
            while more and len(pending) < a.jobs:
                pending.add(pool.submit(one, i))
                i += 1
                more = (i < a.cases) if a.cases else (time.time() - t0 < a.seconds)
            if not pending:
                break
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)

    shutil.rmtree(ctx.work, ignore_errors=True)
    nfail = 0
    stats = {}
    for i in sorted(results):
        kind, failures, summary = results[i]
        key = kind + ":" + summary
        stats[key] = stats.get(key, 0) + 1
        nfail += bool(failures)
        for f in failures:
            print(f"FAIL case {i} ({kind}): {f['what']}")
            if "mutations" in f:
                print("  mutations: " + " / ".join(f["mutations"]))
            print(f"  reproducer: {f['reproducer']}")
            if "case" in f:
                print(f"  descriptor: {f['case']}")
            print(f"  command: {f['command']}")
            for line in f["output"].strip().splitlines()[-20:]:
                print("    | " + line)
    print("fuzz-inputs: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))
    print(f"fuzz-inputs: {len(results)} cases, {nfail} failures "
          f"(seed {a.seed}, {time.time() - t0:.0f} s)")
    if not nfail and not a.out:
        shutil.rmtree(ctx.out, ignore_errors=True)
    return 1 if nfail else 0


def replay(path, ctx):
    if path.endswith(".py"):
        ns = {"inf": math.inf, "nan": math.nan}
        exec(open(path).read(), ns)
        text = repr(ns["case"])
        print(text if len(text) < 4000 else text[:2000] + " ... " + text[-500:])
        rc, out, err, secs = run_limited([sys.executable, os.path.abspath(__file__), "--worker"],
                                         stdin=text.encode(), env=ctx.env)
        print(out + err)
        what = crash_verdict(rc, err, allowed=(0,))
        if not what and RESULT_TAG in out:
            st = json.loads(out.split(RESULT_TAG)[-1].splitlines()[0])["status"]
            what = None if st in ("ok", "refused", "compiled") else st
        print(f"replay: {what or 'ok'} ({secs:.1f} s)")
        return 1 if what else 0
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    class Plain:  # the commands without random flags
        random = staticmethod(lambda: 1.0)
        choice = staticmethod(lambda xs: xs[0])
        randrange = staticmethod(lambda n: 0)
    bad = 0
    for f in mlir_commands(path, text, Plain(), ctx)[0]:
        bad += 1
        print(f"{f['what']}: {f['command']}\n{f['output']}")
    print(f"replay: {bad} failing commands")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
