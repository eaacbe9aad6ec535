# Fully static LLVM/MLIR (DESIGN.md §6, research/mlir-sm90.md §5). Debian's MLIR static
# libraries name the shared `LLVM` target in their link interface; swap it for the static
# LLVM component libraries, point LLVMSupport at static zlib/zstd, and drop z3. glibc stays
# dynamic so that libcuda.so.1 can be dlopen'ed.
set(GDN_STATIC_LLVM_COMPONENTS
  LLVMNVPTXCodeGen LLVMNVPTXDesc LLVMNVPTXInfo
  LLVMX86CodeGen LLVMX86Desc LLVMX86Info LLVMX86AsmParser
  LLVMPasses LLVMipo LLVMLinker LLVMIRReader LLVMAsmParser LLVMBitWriter LLVMBitReader
  LLVMCodeGen LLVMSelectionDAG LLVMAsmPrinter LLVMGlobalISel LLVMTarget LLVMMC
  LLVMOrcJIT LLVMExecutionEngine LLVMPerfJITEvents LLVMFrontendOpenMP LLVMFrontendOffloading
  LLVMCore LLVMSupport LLVMDemangle)
foreach(t ${MLIR_EXPORTED_TARGETS})
  if(TARGET ${t})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
      if(libs)
        set(changed OFF)
        list(FIND libs LLVM idx)
        if(NOT idx EQUAL -1)
          list(REMOVE_ITEM libs LLVM)
          list(APPEND libs ${GDN_STATIC_LLVM_COMPONENTS})
          set(changed ON)
        endif()
        # A few libraries (MLIRExecutionEngine) name the libMLIR.so target.
        list(FIND libs MLIR idx)
        if(NOT idx EQUAL -1)
          list(REMOVE_ITEM libs MLIR)
          list(APPEND libs MLIRExecutionEngineUtils MLIRTargetLLVMIRExport
               MLIRLLVMToLLVMIRTranslation MLIRBuiltinToLLVMIRTranslation
               MLIRLLVMDialect MLIRIR MLIRSupport)
          set(changed ON)
        endif()
        if(changed)
          set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
        endif()
      endif()
    endif()
  endif()
endforeach()
get_target_property(support_libs LLVMSupport INTERFACE_LINK_LIBRARIES)
set(new_support_libs)
foreach(l ${support_libs})
  if(l MATCHES "z3")
  elseif(l STREQUAL "ZLIB::ZLIB")
    list(APPEND new_support_libs /usr/lib/x86_64-linux-gnu/libz.a)
  elseif(l STREQUAL "zstd::libzstd_shared")
    list(APPEND new_support_libs /usr/lib/x86_64-linux-gnu/libzstd.a)
  else()
    list(APPEND new_support_libs ${l})
  endif()
endforeach()
set_target_properties(LLVMSupport PROPERTIES INTERFACE_LINK_LIBRARIES "${new_support_libs}")
add_link_options(-static-libstdc++ -static-libgcc -Wl,--as-needed)
set(MLIR_LINK_MLIR_DYLIB OFF)
# Our own libraries' LLVM_LINK_COMPONENTS must not pull in libLLVM.so either.
set(LLVM_LINK_LLVM_DYLIB OFF)
