"""The benchmark scripts' GPU-free paths, so that a script broken here is
found before a device session spends its time on it: bench_prefill.py's
CPU dry run and its --from-json join, bench_gdn.py's --from-json redraw of
the committed table, fp8_error_model.py on a small case (its model against
its own simulation), and sass_mix.py and loop_mix.py where ptxas and
nvdisasm are installed.
No timing is asserted."""
import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BENCH = os.path.join(ROOT, "bench")


def run(script, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, os.path.join(BENCH, script), *args], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{script} {args}: rc {r.returncode}\n{r.stdout[-3000:]}\n" \
                              f"{r.stderr[-3000:]}"
    return r.stdout


def test_bench_prefill_cpu_dry_run_and_join(tmp_path):
    """Two parts of a small grid on the CPU lowering (a fixed batch, then a
    varlen mix), joined: every point has a gdn row with its time and its
    errors against the token-loop reference (0 for the state on the CPU,
    which is that loop; o's bf16 rounding), the proxy's error against fp64
    in the header, and the targets section."""
    small = ["--device", "cpu", "--hv", "2", "--H", "1", "--K", "16", "--V", "16",
             "--proxy-T", "16"]
    a, b = tmp_path / "a", tmp_path / "b"
    run("bench_prefill.py", *small, "--Ns", "2", "--Ts", "20", "--no-mixes", "--out", str(a))
    log = run("bench_prefill.py", *small, "--Ns", "1", "--Ts", "1", "--mixes", "64 x 256",
              "--max-tokens", "0", "--out", str(b))
    (tmp_path / "b.log").write_text(log)
    # A third part runs the point the second skipped: it leaves "Not run".
    c = tmp_path / "c"
    run("bench_prefill.py", *small, "--Ns", "1", "--Ts", "1", "--no-mixes", "--out", str(c))
    joined = tmp_path / "joined"
    run("bench_prefill.py", "--from-json", f"{a}/bench_prefill.json,{tmp_path}/b.log",
        "--out", str(joined))
    rejoined = tmp_path / "rejoined"
    run("bench_prefill.py", "--from-json", f"{joined}/bench_prefill.json,{c}/bench_prefill.json",
        "--out", str(rejoined))
    again = json.loads((rejoined / "bench_prefill.json").read_text())
    assert again["meta"]["skipped"] == [] and len(again["results"]) == 3
    data = json.loads((joined / "bench_prefill.json").read_text())
    po, ps = data["meta"]["proxy"]
    assert po < 1e-5 and ps < 1e-5  # the f32 token loop against fp64
    assert data["meta"]["skipped"] == ["fixed, N = 1, T = 1, HV = 2"]  # over --max-tokens 0
    points = {(r["workload"], r["N"], r["T"]) for r in data["results"]}
    assert points == {("fixed, N = 2", 2, 20), ("varlen, 64 x 256", 64, None)}
    for r in data["results"]:
        (gdn,) = [x for x in r["rows"] if x["impl"] == "gdn"]
        assert gdn["error"] is None and gdn["us"] > 0 and gdn["timing"] == "wall clock (cpu)"
        assert gdn["state_err"] == 0.0 and 1e-4 < gdn["o_err"] < 1e-2
    md = (joined / "bench_prefill.md").read_text()
    assert "| varlen, 64 x 256 | 64 | — | 16384 | 2 | gdn |" in md
    assert "Targets (issue 23)" in md and "Not run (tokens over --max-tokens)" in md


def test_bench_prefill_pinned_schedule_rows(tmp_path):
    """--schedule adds a gdn row with the pins, timed and checked like gdn's,
    and not taken for an anchor: gdn's own row has no fastest anchor (none
    runs on the CPU), the pinned row its time over gdn's."""
    run("bench_prefill.py", "--device", "cpu", "--hv", "2", "--H", "1", "--K", "16", "--V", "16",
        "--proxy-T", "16", "--Ns", "1", "--Ts", "20", "--no-mixes", "--schedule", "warps=2",
        "--schedule", "warps=4,precision=tf32", "--out", str(tmp_path))
    data = json.loads((tmp_path / "bench_prefill.json").read_text())
    (r,) = data["results"]
    rows = {x["impl"]: x for x in r["rows"]}
    assert set(rows) == {"gdn", "gdn, warps = 2", "gdn, warps = 4, precision = tf32"}
    for x in rows.values():
        assert x["error"] is None and x["us"] > 0 and x["o_err"] < 1e-2
    md = (tmp_path / "bench_prefill.md").read_text()
    gdn_line = [line for line in md.splitlines() if "| gdn |" in line][0]
    assert gdn_line.rstrip().endswith("| — |")
    assert "| gdn, warps = 2 |" in md and "An anchor is faster" not in md


def test_bench_gdn_redraws_the_committed_table(tmp_path):
    src = os.path.join(BENCH, "results", "anchors", "bench_gdn.json")
    rows = json.load(open(src))
    run("bench_gdn.py", "--from-json", src, "--out", str(tmp_path))
    md = (tmp_path / "bench_gdn.md").read_text()
    body = [line for line in md.splitlines() if line.startswith("| ") and " | " in line
            and line.split(" | ")[1].strip().isdigit()]
    assert len(body) >= len(rows)  # a row per point, more with several anchors


def test_bench_gdn_skips_int32_intermediate_overflow():
    """The verify anchors that offset the per-token state buffer in int32 are
    not run past 2^31 elements (an illegal address ends the benchmark's CUDA
    context): SGLang's Triton and CuTe-DSL MTP kernels and FlashInfer's,
    at verify T = 12, HV = 32 from N = 512 (3.2e9 elements), not at N = 256;
    gdn and decode workloads always run."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_gdn", os.path.join(BENCH, "bench_gdn.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    verify = next(w for w in bench.WORKLOADS if w.name == "verify, bf16 pool + per-token states")
    decode = next(w for w in bench.WORKLOADS if w.name == "decode, bf16 pool")
    for name in ("SGLang", "SGLang CuTe-DSL MTP", "FlashInfer pretranspose"):
        assert name in verify.anchors
        assert bench.intermediate_overflows(name, verify, 512, 12, 32, 128, 128)
        assert not bench.intermediate_overflows(name, verify, 256, 12, 32, 128, 128)
        assert not bench.intermediate_overflows(name, decode, 4096, 0, 32, 128, 128)
    assert not bench.intermediate_overflows("gdn", verify, 1024, 12, 64, 128, 128)
    assert "FlashInfer MTP" in bench.INT32_INTERMEDIATE


def test_fp8_error_model_small(tmp_path):
    """Its model of the stored state's error against its own simulation
    (8 heads, K = V = 32, 400 steps): within 25 % on every head."""
    run("fp8_error_model.py", "--steps", "400", "--HV", "8", "--K", "32", "--V", "32",
        "--out", str(tmp_path))
    md = (tmp_path / "error-model.md").read_text()
    per_head = [line.split(" | ") for line in md.splitlines()
                if line.startswith("| float8_e4m3fn | ") and "all" not in line]
    assert len(per_head) == 2  # heads 0 and 4
    for cells in per_head:
        measured, model = float(cells[4]), float(cells[5])
        assert 0.75 < measured / model < 1.25, cells


def tool(name):
    """A tool beside the library under test (build/bin next to build/lib)."""
    lib = os.environ.get("GDN_LIBRARY", "")
    path = os.path.join(os.path.dirname(lib), "..", "bin", name)
    return path if lib and os.path.exists(path) else None


def gdn_opt():
    """gdn-opt, which sass_mix.py asks for the schedule."""
    return tool("gdn-opt")


@pytest.mark.skipif(not (shutil.which("ptxas") and shutil.which("nvdisasm") and gdn_opt()),
                    reason="sass_mix.py needs ptxas and nvdisasm on PATH and gdn-opt beside "
                           "GDN_LIBRARY")
def test_sass_mix():
    out = run(os.path.join("profile", "sass_mix.py"), "--N", "8", "--gdn-opt", gdn_opt())
    assert "an element" in out and "| FFMA |" in out


@pytest.mark.skipif(not (shutil.which("ptxas") and shutil.which("nvdisasm") and tool("gdn-run")),
                    reason="loop_mix.py needs ptxas and nvdisasm on PATH and gdn-run beside "
                           "GDN_LIBRARY")
def test_loop_mix(tmp_path):
    """chunk_parallel's scan (launch 1) of a prefill, unsplit (segments = 1:
    the cost model splits this one, whose launch 1 is then the segment
    maps): its loop is the chunk loop, whose trip runs the chunk's products
    (HMMA) and issues the next chunk's copies (LDGSTS)."""
    sys.path.insert(0, os.path.join(BENCH, "profile"))
    from prefill_sweep import recurrent
    f = tmp_path / "prefill.mlir"
    f.write_text(recurrent(1, 4096))
    out = run(os.path.join("profile", "loop_mix.py"), str(f), "--launch", "1",
              "--schedule", "#gdn.schedule<segments = 1>", "--gdn-run", tool("gdn-run"))
    rows = {cells[1].strip(): cells[2].strip() for cells in
            (line.split("|") for line in out.splitlines() if line.startswith("| "))}
    assert int(rows["HMMA"]) >= 48 and int(rows["LDGSTS"]) > 0, out
    assert int(rows["all"]) > int(rows["HMMA"]), out


def test_ncu_phases_splits_at_barriers(tmp_path):
    """ncu_phases.py sums each stretch between BAR.SYNC instructions: two
    phases here, the second holding the uncoalesced stores; a CSV without
    one of its columns is an error naming the column."""
    names = ["Address", "Source", "Warp Stall Sampling (All Samples)",
             "Instructions Executed", "L2 Theoretical Sectors Global Excessive",
             "L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared"]
    rows = [["0x10", "LDS R1, [R2]", "30", "100", "0", "4", "8"],
            ["0x20", "BAR.SYNC.DEFER_BLOCKING 0x0", "10", "100", "0", "0", "0"],
            ["0x30", "STG.E desc[UR6][R2.64], R8", "60", "100", "1200000", "0", "0"]]
    path = tmp_path / "src.csv"
    path.write_text("\n".join(",".join(f'"{c}"' for c in r)
                              for r in [["Kernel Name", "k"], names, *rows]) + "\n")
    out = run(os.path.join("profile", "ncu_phases.py"), str(path))
    table = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    phases = {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in table}
    assert phases["0"][0] == "40.0 %" and phases["1"][0] == "60.0 %", out
    assert phases["1"][2] == "1.2" and phases["0"][2] == "0.0", out
    assert "STG.E" in out.split("Most stall samples:")[1].splitlines()[1], out
    bad = tmp_path / "bad.csv"
    bad.write_text('"Kernel Name","k"\n"Address","Source"\n')
    r = subprocess.run([sys.executable, os.path.join(BENCH, "profile", "ncu_phases.py"),
                        str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "Warp Stall Sampling" in r.stderr, r.stderr
