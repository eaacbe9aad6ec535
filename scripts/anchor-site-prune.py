#!/usr/bin/env python3
"""Prunes an anchor site (pip install --target) to the files reachable from
entry modules (scripts/anchor-site.sh).

Reachability is static: starting from the entry modules, every `import` and
`from ... import` that runs at import time (module level, class bodies,
try/except and if blocks, not `if TYPE_CHECKING:`; inside functions too for
the entry modules and the modules matching --deep), relative imports, and
importlib.import_module / __import__ calls with literal names. A module that
imports by a computed name at import time keeps its whole package. Only the
top-level packages named with --prune are pruned; every other one in the
site is kept whole (the small dependencies, nvidia-cutlass-dsl's native
libraries). Non-Python files are kept in the directories of kept modules
(unless they match --drop), and the directories named with --keep whole
(data a kept module reads or checks for). Nothing is replaced or stubbed: a
module the pruning missed is a ModuleNotFoundError, not a fake.

  python3 scripts/anchor-site-prune.py SITE --prune sglang --entry MODULE ... [--dry-run]
"""
import argparse
import ast
import fnmatch
import os
import sys


def index_modules(site):
    """name -> (path, is_package) for every .py module and package under site."""
    mods = {}
    for d, dirs, files in os.walk(site):
        rel = os.path.relpath(d, site)
        parts = [] if rel == "." else rel.split(os.sep)
        if any(not p.isidentifier() for p in parts):
            dirs[:] = []
            continue
        for f in files:
            if f.endswith(".py"):
                stem = f[:-3]
                if stem == "__init__":
                    if parts:
                        mods[".".join(parts)] = (os.path.join(d, f), True)
                elif stem.isidentifier():
                    mods[".".join(parts + [stem])] = (os.path.join(d, f), False)
            elif f.endswith(".so") and ".cpython-" in f or f.endswith(".abi3.so"):
                stem = f.split(".")[0]
                mods.setdefault(".".join(parts + [stem]), (os.path.join(d, f), False))
        for sub in dirs:  # namespace packages (no __init__.py)
            if sub.isidentifier() and not os.path.exists(os.path.join(d, sub, "__init__.py")):
                mods.setdefault(".".join(parts + [sub]), (os.path.join(d, sub), True))
    return mods


def _walk(tree, deep):
    """ast.walk, skipping function bodies unless deep (what runs at import time)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)  # typing-only imports never run
            continue
        for child in ast.iter_child_nodes(node):
            if not deep and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            todo.append(child)


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(path, modname, is_pkg, deep):
    """(absolute module names imported, computed-name import seen)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (SyntaxError, ValueError) as e:
        print(f"# cannot parse {path}: {e}; keeping its package whole", file=sys.stderr)
        return set(), True
    pkg = modname if is_pkg else modname.rpartition(".")[0]
    out, dynamic = set(), False
    for node in _walk(tree, deep):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            for a in node.names:
                if a.name != "*":
                    out.add(f"{mod}.{a.name}")
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if arg.value.startswith(".") and len(node.args) > 1:
                        dynamic = True  # relative to a computed package
                    elif arg.value.startswith("."):
                        lvl = len(arg.value) - len(arg.value.lstrip("."))
                        base = pkg.split(".")
                        base = base[:len(base) - (lvl - 1)] if lvl > 1 else base
                        out.add(".".join(base + [arg.value.lstrip(".")]))
                    else:
                        out.add(arg.value)
                else:
                    dynamic = True
    return out, dynamic


def closure(mods, entries, pruned, deep_globs):
    keep, whole, todo = set(), set(), list(entries)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        if name not in mods:
            continue
        keep.add(name)
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
        path, is_pkg = mods[name]
        if not path.endswith(".py"):
            continue
        deep = any(fnmatch.fnmatch(name, g) for g in deep_globs)
        found, dynamic = imports_of(path, name, is_pkg, deep)
        if dynamic and name.split(".")[0] in pruned:
            pkg = name if is_pkg else parent
            whole.add(pkg)
            todo.extend(m for m in mods if m.startswith(pkg + "."))
        for m in found:
            # `from a.b import c`: a.b, and a.b.c when it is a module
            todo.append(m)
    return keep, whole


def main():
    p = argparse.ArgumentParser()
    p.add_argument("site")
    p.add_argument("--entry", action="append", required=True, help="entry module (repeatable)")
    p.add_argument("--prune", action="append", default=[], help="top-level package to prune")
    p.add_argument("--deep", action="append", default=[],
                   help="glob of module names whose function bodies' imports count too "
                        "(the entry modules always do)")
    p.add_argument("--drop", action="append", default=[], help="glob of files to drop (relative)")
    p.add_argument("--keep", action="append", default=[],
                   help="directory (relative to the site) kept whole: data a kept module "
                        "reads or checks for")
    p.add_argument("--dry-run", action="store_true")
    a = p.parse_args()
    mods = index_modules(a.site)
    missing = [e for e in a.entry if e not in mods]
    if missing:
        sys.exit(f"entry modules not in the site: {missing}")
    keep, whole = closure(mods, a.entry, set(a.prune), a.entry + a.deep)
    keep_files = {os.path.abspath(mods[m][0]) for m in keep}
    keep_dirs = {os.path.dirname(f) for f in keep_files if f.endswith(".py")}
    removed = kept = 0
    for top in a.prune:
        root = os.path.join(a.site, top)
        for d, dirs, files in os.walk(root, topdown=False):
            for f in files:
                path = os.path.abspath(os.path.join(d, f))
                rel = os.path.relpath(path, a.site)
                if f.endswith(".py") or ".cpython-" in f or f.endswith(".pyc"):
                    ok = path in keep_files
                else:  # data: kept beside kept modules
                    ok = os.path.dirname(path) in keep_dirs
                if ok and any(fnmatch.fnmatch(rel, g) for g in a.drop):
                    ok = False
                if any(rel.startswith(k.rstrip("/") + "/") for k in a.keep):
                    ok = True
                if ok:
                    kept += os.path.getsize(path)
                    continue
                removed += os.path.getsize(path)
                if not a.dry_run:
                    os.remove(path)
            if not a.dry_run and not os.listdir(d):
                os.rmdir(d)
    print(f"pruned {', '.join(a.prune)}: kept {kept / 1e6:.1f} MB, removed {removed / 1e6:.1f} MB; "
          f"{len(keep)} modules reachable; kept whole (computed imports): {sorted(whole) or 'none'}")


if __name__ == "__main__":
    main()
