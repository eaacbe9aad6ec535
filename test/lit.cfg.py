# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GDN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gdn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.gdn_src_root, "examples")))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["gdn-opt", "gdn-run"]
llvm_config.add_tool_substitutions(tools, [config.gdn_tools_dir, config.llvm_tools_dir])

# ptxas (CUDA toolkit) assembles emitted PTX; a test that needs it says
# REQUIRES: ptxas and is reported UNSUPPORTED where it is missing.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
    # The Python tests of the SASS scripts (bench/profile) look it up on PATH.
    llvm_config.with_environment("PATH", os.path.dirname(config.ptxas), append_path=True)
    # Blackwell (sm_100a) needs CUDA 12.8's ptxas or newer.
    import subprocess as _sp
    _help = _sp.run([config.ptxas, "--help"], capture_output=True, text=True).stdout
    if "sm_100a" in _help:
        config.available_features.add("ptxas-sm100a")
    # The toolkit around that ptxas, when it has libdevice (REQUIRES: libdevice).
    _cuda = os.path.dirname(os.path.dirname(os.path.realpath(config.ptxas)))
    if os.path.exists(os.path.join(_cuda, "nvvm", "libdevice", "libdevice.10.bc")):
        config.available_features.add("libdevice")
        config.substitutions.append(("%cuda_home", _cuda))

# GPU tests (REQUIRES: cuda) run only where a CUDA driver and device exist;
# CPU-only CI reports them UNSUPPORTED.
if os.environ.get("GDN_TEST_CUDA") == "1":
    config.available_features.add("cuda")

# Python package tests: a python3 on PATH with numpy and pytest.
import shutil
import subprocess

config.substitutions.append(("%gdn_lib_dir", os.path.join(config.gdn_obj_root, "lib")))
config.substitutions.append(("%gdn_src_root", config.gdn_src_root))
python3 = shutil.which("python3", path=config.environment.get("PATH", os.environ.get("PATH")))
if python3 and subprocess.call([python3, "-c", "import numpy, pytest"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("python-pytest")
    config.substitutions.append(("%gdn_python", python3))
