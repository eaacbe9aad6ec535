//===- CudaDriver.h - CUDA driver API loaded at run time --------*- C++ -*-===//
//
// The CUDA driver (libcuda.so.1) is loaded with dlopen, so the project builds
// and runs on machines without CUDA; every entry point reports a clear error
// string instead of failing to link or aborting.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_RUNTIME_CUDADRIVER_H
#define GDN_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdn {
namespace runtime {

using CUdeviceptr = unsigned long long;
using CUstream = struct CUstream_st *;
using CUfunction = struct CUfunc_st *;
using CUmodule = struct CUmod_st *;
using CUcontext = struct CUctx_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// Result of a driver call: ok, or a message "cuXxx failed: CUDA_ERROR_... (code)".
struct Status {
  bool ok = true;
  std::string message;
  static Status success() { return {}; }
  static Status error(std::string m) { return {false, std::move(m)}; }
  explicit operator bool() const { return ok; }
};

/// One CUDA device with its primary context made current on the calling thread.
/// All methods return Status; none aborts the process.
class CudaDriver {
public:
  /// Loads libcuda.so.1, calls cuInit, retains device `ordinal`'s primary
  /// context and makes it current. Fails with a clear message when the library
  /// is missing ("no CUDA driver: libcuda.so.1 could not be loaded (...)") or there is no GPU.
  static Status open(int ordinal, std::unique_ptr<CudaDriver> &out);
  /// The ordinal of the device of the calling thread's current context, or 0
  /// when no context is current. Fails only when the driver cannot be loaded.
  static Status currentDevice(int &ordinal);
  ~CudaDriver();

  std::string deviceName() const;
  int smCount() const;
  /// Compute capability, e.g. 90 for sm_90.
  int computeCapability() const;

  /// JIT-compiles PTX text with cuModuleLoadDataEx; on failure the message
  /// includes the JIT error log.
  Status loadModule(const std::string &ptx, CUmodule &module);
  Status getFunction(CUmodule module, const std::string &name, CUfunction &fn);
  Status unloadModule(CUmodule module);

  Status alloc(size_t bytes, CUdeviceptr &ptr);
  Status free(CUdeviceptr ptr);
  Status copyToDevice(CUdeviceptr dst, const void *src, size_t bytes);
  Status copyToHost(void *dst, CUdeviceptr src, size_t bytes);
  Status copyDeviceToDeviceAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                 CUstream stream);
  Status memsetD8(CUdeviceptr dst, unsigned char value, size_t bytes);
  /// Stream-ordered allocation and free (cuMemAllocAsync / cuMemFreeAsync,
  /// CUDA >= 11.2; allowed under stream capture): a program's workspaces.
  /// 0 bytes gives a null pointer; freeing one does nothing.
  Status allocAsync(size_t bytes, CUstream stream, CUdeviceptr &ptr);
  Status freeAsync(CUdeviceptr ptr, CUstream stream);

  /// Launches `fn` on `stream` (nullptr = the legacy default stream).
  /// `args[i]` points to the i-th kernel parameter value (cuLaunchKernel).
  /// `programmatic`: with programmatic stream serialization
  /// (cuLaunchKernelEx, CUDA >= 12.0), so the kernel may start while the
  /// previous kernel of the stream runs; for kernels compiled for it
  /// (griddepcontrol.wait before their dependent reads). `sharedBytes` of
  /// dynamic shared memory past 48 KiB opt the kernel in first
  /// (cuFuncSetAttribute); more than the device gives is the driver's error.
  Status launch(CUfunction fn, const unsigned grid[3], const unsigned block[3],
                unsigned sharedBytes, CUstream stream, void **args,
                bool programmatic = false);

  Status createStream(CUstream &stream);
  Status destroyStream(CUstream stream);
  Status synchronize(CUstream stream);

  /// Stream capture into a CUDA graph (global capture mode), instantiate,
  /// replay and destroy.
  Status beginCapture(CUstream stream);
  Status endCapture(CUstream stream, CUgraph &graph);
  Status instantiate(CUgraph graph, CUgraphExec &exec);
  Status launchGraph(CUgraphExec exec, CUstream stream);
  Status destroyGraph(CUgraph graph, CUgraphExec exec);

  Status createEvent(CUevent &event);
  Status destroyEvent(CUevent event);
  Status recordEvent(CUevent event, CUstream stream);
  /// Milliseconds between two recorded events (synchronizes on `end`).
  Status elapsedMs(CUevent start, CUevent end, float &ms);

  struct Impl;

private:
  CudaDriver() = default;
  std::unique_ptr<Impl> impl;
};

} // namespace runtime
} // namespace gdn

#endif // GDN_RUNTIME_CUDADRIVER_H
