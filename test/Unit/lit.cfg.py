# -*- Python -*-
# The GoogleTest unit tests (build/unittests/GDNUnitTests), run by lit as part
# of check-gdn: one lit result per TEST().
import os
import lit.formats

config.name = "GDN-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.gdn_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
