"""gdn's entry points (python/gdn/ops/) against the signatures of the anchor
functions they replace, read from the INSTALLED anchor packages without
importing them (they pull in triton, CUDA libraries...): the module file is
located through importlib.util.find_spec on the top package and the function
parsed with `ast`. For each anchor function: the same parameter names in the
same order, the same required parameters, the same literal defaults, **kwargs
exactly where the anchor takes it, and every parameter in docs/anchors.md's
table with the anchor's default. Skipped, with the reason, when an anchor
package is not installed (`pip install --no-deps` of its wheel is enough).

A plain test (no anchor needed) checks that docs/anchors.md lists every
parameter of gdn's entry points with gdn's default, and nothing else."""
import ast
import importlib.util
import inspect
import os

import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "anchors.md")

# (anchor name in the table, top package, module file inside the package's
# parent directory, function[, gdn.ops's name for it where the anchors'
# names collide: two chunk_gated_delta_rule besides FLA's])
ANCHORS = [
    ("FLA", "fla", "fla/ops/gated_delta_rule/fused_recurrent.py",
     "fused_recurrent_gated_delta_rule"),
    ("FLA", "fla", "fla/ops/kda/fused_recurrent.py", "fused_recurrent_kda"),
    ("FLA", "fla", "fla/ops/gated_delta_rule/chunk.py", "chunk_gated_delta_rule"),
    ("FLA", "fla", "fla/ops/kda/chunk.py", "chunk_kda"),
    ("SGLang", "sglang", "sglang/kernels/ops/attention/linear/fused_sigmoid_gating_recurrent.py",
     "fused_sigmoid_gating_delta_rule_update"),
    ("SGLang", "sglang", "sglang/kernels/ops/attention/fla/fused_recurrent.py",
     "fused_recurrent_gated_delta_rule_packed_decode"),
    ("FlashInfer", "flashinfer", "flashinfer/gdn_decode.py",
     "gated_delta_rule_decode_pretranspose"),
    ("FlashInfer", "flashinfer", "flashinfer/gdn_decode.py", "gated_delta_rule_decode"),
    ("FlashInfer", "flashinfer", "flashinfer/gdn_decode.py", "gated_delta_rule_mtp"),
    ("FlashInfer", "flashinfer", "flashinfer/gdn_decode.py", "gated_delta_rule_replayssm_commit"),
    ("SGLang", "sglang", "sglang/kernels/ops/attention/linear/gdn_replayssm_spec_fold.py",
     "commit_gdn_replayssm_fold_all_layers"),
    ("SGLang", "sglang", "sglang/kernels/ops/attention/fla/chunk.py", "chunk_gated_delta_rule",
     "sglang_chunk_gated_delta_rule"),
    ("FlashInfer", "flashinfer", "flashinfer/gdn_prefill.py", "chunk_gated_delta_rule",
     "flashinfer_chunk_gated_delta_rule"),
]
ANCHORS = [a if len(a) == 5 else (*a, a[3]) for a in ANCHORS]
REQUIRED = "—"  # the table's default for a parameter without one
KWARGS = "**kwargs"


def _find_function(tree, name):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def anchor_function(package, relpath, function):
    """The ast.FunctionDef of `function` in the installed `package` (skips the
    test when the package is not installed). Looks in `relpath` first, then in
    every module of the package that defines it at top level (the anchor may
    have moved it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"anchor package '{package}' is not installed (pip install --no-deps its "
                    "wheel to check gdn's signatures against it)")
    locations = list(spec.submodule_search_locations)

    def candidates():  # lazily: the package walk only when the file moved
        for loc in locations:
            yield os.path.join(os.path.dirname(loc), relpath)
        for loc in locations:
            for dirpath, _, files in os.walk(loc):
                yield from (os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".py"))

    needle = f"def {function}("
    for path in candidates():
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if needle not in text:
            continue
        node = _find_function(ast.parse(text, path), function)
        if node is not None:
            return node, path
    pytest.fail(f"{package} is installed but defines no top-level function {function}")


def anchor_parameters(node):
    """[(name, kind, default source text or REQUIRED, literal default or
    NotImplemented)] in order, kind "positional", "keyword_only", "var_positional"
    or "var_keyword"."""
    a = node.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = []

    def entry(name, kind, default):
        if default is None:
            return (name, kind, REQUIRED, NotImplemented)
        try:
            value = ast.literal_eval(default)
        except ValueError:
            value = NotImplemented  # not a literal: its default is not compared
        return (name, kind, ast.unparse(default), value)

    for p, d in zip(positional, defaults):
        params.append(entry(p.arg, "positional", d))
    if a.vararg is not None:
        params.append((a.vararg.arg, "var_positional", REQUIRED, NotImplemented))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(entry(p.arg, "keyword_only", d))
    if a.kwarg is not None:
        params.append((a.kwarg.arg, "var_keyword", REQUIRED, NotImplemented))
    return params


_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional",
          inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
          inspect.Parameter.KEYWORD_ONLY: "keyword_only",
          inspect.Parameter.VAR_POSITIONAL: "var_positional",
          inspect.Parameter.VAR_KEYWORD: "var_keyword"}


def gdn_parameters(function):
    """[(name, kind, default or inspect.Parameter.empty)] of gdn's entry point."""
    sig = inspect.signature(getattr(ops, function))
    return [(p.name, _KINDS[p.kind], p.default) for p in sig.parameters.values()]


def doc_table():
    """{(anchor, function, argument): (default text, gdn's behaviour)} from the
    argument table of docs/anchors.md (rows of five cells whose first cell
    is an anchor name)."""
    rows = {}
    with open(DOC, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) != 5 or cells[0] not in {a for a, *_ in ANCHORS}:
                continue
            anchor, function, argument, default, behaviour = cells
            key = (anchor, function.strip("`"), argument.strip("`"))
            assert key not in rows, f"docs/anchors.md lists {key} twice"
            rows[key] = (default.strip("`"), behaviour)
    return rows


def doc_name(name, kind):
    return KWARGS if kind == "var_keyword" else ("*" + name if kind == "var_positional" else name)


def same_default(a, b):
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("anchor,package,relpath,function,name", ANCHORS,
                         ids=[n for *_, n in ANCHORS])
def test_gdn_accepts_every_parameter_of_the_installed_anchor(anchor, package, relpath, function,
                                                             name):
    node, path = anchor_function(package, relpath, function)
    theirs = anchor_parameters(node)
    ours = gdn_parameters(name)
    where = f"{function} ({path})"
    # The same names, in the same order (**kwargs where the anchor has it).
    assert [(n, k) for n, k, *_ in theirs] == [(n, k) for n, k, _ in ours], (
        f"{where}: anchor parameters {[(n, k) for n, k, *_ in theirs]}, gdn's "
        f"{[(n, k) for n, k, _ in ours]}")
    positional = [n for n, k, *_ in theirs if k == "positional"]
    assert positional == [n for n, k, _ in ours if k == "positional"], where
    for (name, kind, text, value), (_, _, default) in zip(theirs, ours):
        if kind.startswith("var_"):
            continue
        if text == REQUIRED:
            assert default is inspect.Parameter.empty, f"{where}: {name} is required in the anchor"
            continue
        assert default is not inspect.Parameter.empty, f"{where}: {name} has a default ({text})"
        if value is not NotImplemented:
            assert same_default(value, default), (
                f"{where}: {name} defaults to {text} in the anchor, {default!r} in gdn")


@pytest.mark.parametrize("anchor,package,relpath,function,name", ANCHORS,
                         ids=[n for *_, n in ANCHORS])
def test_docs_table_lists_every_anchor_parameter(anchor, package, relpath, function, name):
    node, path = anchor_function(package, relpath, function)
    rows = doc_table()
    for param, kind, text, _ in anchor_parameters(node):
        key = (anchor, function, doc_name(param, kind))
        assert key in rows, f"docs/anchors.md has no row for {key} ({path})"
        doc_default, behaviour = rows[key]
        assert doc_default == text, f"{key}: documented default {doc_default}, anchor's {text}"
        assert behaviour, f"{key}: no behaviour documented"


# (anchor, anchor function, gdn.ops name)
ENTRY_POINTS = sorted({(a, f, n) for a, _, _, f, n in ANCHORS})


def test_docs_table_lists_every_parameter_of_gdns_entry_points():
    """No anchor needed: every parameter of gdn's entry points has a row with
    gdn's default (REQUIRED for none), and every row of those functions names
    one of them."""
    rows = doc_table()
    for anchor, function, ours in ENTRY_POINTS:
        assert ours in ops.__all__, f"{ours} is not exported by gdn.ops"
        names = set()
        for name, kind, default in gdn_parameters(ours):
            key = (anchor, function, doc_name(name, kind))
            names.add(key[2])
            assert key in rows, f"docs/anchors.md has no row for {key}"
            expected = REQUIRED if default is inspect.Parameter.empty else repr(default)
            assert rows[key][0] == expected, (
                f"{key}: documented default {rows[key][0]}, gdn's {expected}")
            behaviour = rows[key][1]
            assert any(word in behaviour for word in (
                "supported", "ignored", "NotImplementedError", "ValueError")), (
                f"{key}: the behaviour names none of supported / ignored / "
                f"NotImplementedError: {behaviour!r}")
        stale = {arg for (a, fn, arg) in rows if (a, fn) == (anchor, function)} - names
        assert not stale, (f"docs/anchors.md lists arguments {anchor}'s {function} does not "
                           f"take: {stale}")
    assert {(a, fn) for a, fn, _ in rows} == {(a, fn) for a, fn, _ in ENTRY_POINTS}
