//===- CudaDriver.cpp - CUDA driver API loaded at run time ----------------===//
//
// libcuda.so.1 is opened with dlopen and every entry point is looked up with
// dlsym, so this file needs neither CUDA headers nor a link-time dependency on
// the driver. The few driver types, enums and constants used are declared
// below with the values of the public cuda.h.
//
// Every call returns a Status; nothing aborts, throws or prints.
//
//===----------------------------------------------------------------------===//

#include "gdn/Runtime/CudaDriver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <initializer_list>
#include <mutex>

using namespace gdn::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Driver API declarations (values from the public cuda.h).
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUgraphNode = struct CUgraphNode_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

// CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// CUjit_option
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// CUstreamCaptureMode
constexpr int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
// CUfunction_attribute: the dynamic shared memory a kernel may be launched
// with; past 48 KiB a kernel must opt in.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr unsigned kDefaultDynamicSharedBytes = 48 * 1024;

// CUstream_flags / CUevent_flags
constexpr unsigned CU_STREAM_DEFAULT = 0x0;
[[maybe_unused]] constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DEFAULT = 0x0;
// cuLaunchKernelEx (CUDA >= 12.0): its config and one attribute, laid out as
// cuda.h's CUlaunchConfig and CUlaunchAttribute (an id padded to 8 bytes, a
// 64-byte value union).
constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "cuda.h's CUlaunchAttribute");

constexpr size_t kJitErrorLogBytes = 8192;
constexpr size_t kJitInfoLogBytes = 4096;

/// Driver entry points. The comment after each one is the exported symbol that
/// cuda.h maps the API name to (the name without a suffix when it maps to
/// itself); the per-thread-default-stream variants (_ptds/_ptsz) are not used,
/// so a nullptr stream is the legacy default stream.
struct DriverApi {
  // Initialization, version and errors.
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int *) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;   // optional
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr; // optional
  // Devices and contexts.
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr; // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice *) = nullptr;
  // Modules.
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule,
                                  const char *) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  // Memory.
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;               // _v2
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;                          // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr; // _v2
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;       // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t,
                                CUstream) = nullptr;                    // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr; // _v2
  // Optional (CUDA >= 11.2): only programs with workspaces need them.
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  // Execution.
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **) = nullptr;
  // Optional (CUDA >= 12.0): only programmatic dependent launches need it.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                               void **) = nullptr;
  // Streams.
  CUresult (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr; // _v2
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  // Graphs.
  CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr; // _v2
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *) = nullptr;
  // cuGraphInstantiate maps to cuGraphInstantiateWithFlags (CUDA >= 11.4);
  // drivers older than that only have cuGraphInstantiate_v2.
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long) = nullptr;
  CUresult (*cuGraphInstantiate_v2)(CUgraphExec *, CUgraph, CUgraphNode *,
                                    char *, size_t) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  // Events.
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr; // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  // cuda.h >= 12.8 maps cuEventElapsedTime to cuEventElapsedTime_v2 (same
  // signature); older drivers only export the unsuffixed symbol.
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
};

/// The process-wide libcuda.so.1 handle and its entry points, loaded once.
struct DriverLibrary {
  void *handle = nullptr;
  DriverApi api;
  /// Empty when the library and every required entry point were found.
  std::string error;
};

/// Looks up `name` in `handle` and stores it in the function pointer `fn`.
template <typename Fn> bool lookup(void *handle, const char *name, Fn &fn) {
  void *sym = dlsym(handle, name);
  static_assert(sizeof(sym) == sizeof(fn), "function pointer size");
  std::memcpy(&fn, &sym, sizeof(fn));
  return sym != nullptr;
}

/// Tries each symbol name of `names` in order; true when one was found.
template <typename Fn>
bool lookupFirst(void *handle, std::initializer_list<const char *> names,
                 Fn &fn) {
  for (const char *name : names)
    if (lookup(handle, name, fn))
      return true;
  return false;
}

void loadDriverLibrary(DriverLibrary &lib) {
  dlerror(); // Clear any stale error.
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    lib.error =
        std::string("no CUDA driver: libcuda.so.1 could not be loaded (") +
        (why ? why : "unknown dlopen error") + ")";
    return;
  }

  DriverApi &api = lib.api;
  const char *missing = nullptr;
  auto require = [&](bool found, const char *name) {
    if (!found && !missing)
      missing = name;
  };
#define GDN_REQUIRE(field, symbol)                                             \
  require(lookup(handle, symbol, api.field), symbol)
  GDN_REQUIRE(cuInit, "cuInit");
  GDN_REQUIRE(cuDriverGetVersion, "cuDriverGetVersion");
  GDN_REQUIRE(cuDeviceGet, "cuDeviceGet");
  GDN_REQUIRE(cuDeviceGetCount, "cuDeviceGetCount");
  GDN_REQUIRE(cuDeviceGetName, "cuDeviceGetName");
  GDN_REQUIRE(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  GDN_REQUIRE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  GDN_REQUIRE(cuCtxSetCurrent, "cuCtxSetCurrent");
  GDN_REQUIRE(cuCtxGetDevice, "cuCtxGetDevice");
  GDN_REQUIRE(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  GDN_REQUIRE(cuModuleGetFunction, "cuModuleGetFunction");
  GDN_REQUIRE(cuModuleUnload, "cuModuleUnload");
  GDN_REQUIRE(cuFuncSetAttribute, "cuFuncSetAttribute");
  GDN_REQUIRE(cuMemAlloc, "cuMemAlloc_v2");
  GDN_REQUIRE(cuMemFree, "cuMemFree_v2");
  GDN_REQUIRE(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  GDN_REQUIRE(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  GDN_REQUIRE(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  GDN_REQUIRE(cuMemsetD8, "cuMemsetD8_v2");
  GDN_REQUIRE(cuLaunchKernel, "cuLaunchKernel");
  GDN_REQUIRE(cuStreamCreate, "cuStreamCreate");
  GDN_REQUIRE(cuStreamSynchronize, "cuStreamSynchronize");
  GDN_REQUIRE(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  GDN_REQUIRE(cuStreamEndCapture, "cuStreamEndCapture");
  GDN_REQUIRE(cuGraphLaunch, "cuGraphLaunch");
  GDN_REQUIRE(cuGraphExecDestroy, "cuGraphExecDestroy");
  GDN_REQUIRE(cuGraphDestroy, "cuGraphDestroy");
  GDN_REQUIRE(cuEventCreate, "cuEventCreate");
  GDN_REQUIRE(cuEventRecord, "cuEventRecord");
  GDN_REQUIRE(cuEventSynchronize, "cuEventSynchronize");
#undef GDN_REQUIRE
  // Entry points whose exported name changed across driver versions: prefer
  // the name current cuda.h maps to, fall back to the older one.
  require(
      lookupFirst(handle,
                  {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
                  api.cuDevicePrimaryCtxRelease),
      "cuDevicePrimaryCtxRelease_v2");
  require(lookupFirst(handle, {"cuStreamDestroy_v2", "cuStreamDestroy"},
                      api.cuStreamDestroy),
          "cuStreamDestroy_v2");
  require(lookupFirst(handle, {"cuEventDestroy_v2", "cuEventDestroy"},
                      api.cuEventDestroy),
          "cuEventDestroy_v2");
  require(lookupFirst(handle, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
                      api.cuEventElapsedTime),
          "cuEventElapsedTime");
  bool withFlags = lookup(handle, "cuGraphInstantiateWithFlags",
                          api.cuGraphInstantiateWithFlags);
  bool v2 = lookup(handle, "cuGraphInstantiate_v2", api.cuGraphInstantiate_v2);
  require(withFlags || v2, "cuGraphInstantiateWithFlags");
  lookup(handle, "cuLaunchKernelEx", api.cuLaunchKernelEx);
  lookup(handle, "cuMemAllocAsync", api.cuMemAllocAsync);
  lookup(handle, "cuMemFreeAsync", api.cuMemFreeAsync);
  // Optional: only used to make error messages readable.
  lookup(handle, "cuGetErrorName", api.cuGetErrorName);
  lookup(handle, "cuGetErrorString", api.cuGetErrorString);

  if (missing) {
    lib.error = std::string("no usable CUDA driver: libcuda.so.1 does not "
                            "export ") +
                missing + " (driver too old?)";
    lib.api = DriverApi();
    // The handle is kept open: unloading a driver library is not worth the
    // risk, and the failure is cached for the process anyway.
  }
  lib.handle = handle;
}

/// Loads libcuda.so.1 the first time it is called; later calls return the
/// cached result (success or failure).
const DriverLibrary &driverLibrary() {
  static DriverLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] { loadDriverLibrary(lib); });
  return lib;
}

/// Names of the CUresult codes most likely to come back when cuGetErrorName
/// itself does not answer (e.g. the stub library answers nothing).
const char *fallbackErrorName(CUresult result) {
  switch (result) {
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case 4:
    return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case 36:
    return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
  case 46:
    return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case 304:
    return "CUDA_ERROR_OPERATING_SYSTEM";
  case 802:
    return "CUDA_ERROR_SYSTEM_NOT_READY";
  case 803:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case 804:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  case 999:
    return "CUDA_ERROR_UNKNOWN";
  default:
    return "unrecognized CUDA error";
  }
}

/// "cuXxx failed: CUDA_ERROR_NAME (code): description".
std::string describeFailure(const DriverApi &api, const char *fn,
                            CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api.cuGetErrorString &&
      api.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string msg = std::string(fn) + " failed: ";
  msg += name ? name : fallbackErrorName(result);
  msg += " (" + std::to_string(result) + ")";
  if (text && *text)
    msg += std::string(": ") + text;
  return msg;
}

/// Trims trailing NULs/whitespace from a JIT log buffer.
std::string logText(const std::vector<char> &buffer) {
  std::string text(buffer.data(), strnlen(buffer.data(), buffer.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' ||
                           text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  return text;
}

/// Serializes CudaDriver::open (cuInit, primary-context retain).
std::mutex &openMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Each CudaDriver gets a distinct id; a thread remembers the id of the
/// driver whose context it made current last, so that a call skips
/// cuCtxSetCurrent when the context is already current on the calling thread.
std::atomic<uint64_t> nextDriverId{1};
thread_local uint64_t currentDriverId = 0;

} // namespace

struct CudaDriver::Impl {
  const DriverApi *api = nullptr;
  uint64_t id = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  int smCount = 0;
  int computeCapability = 0;
  int driverVersion = 0;

  Status check(const char *fn, CUresult result) const {
    if (result == CUDA_SUCCESS)
      return Status::success();
    return Status::error(describeFailure(*api, fn, result));
  }

  /// Makes this device's primary context current on the calling thread (it
  /// is made current on the opening thread by open; other threads get it here
  /// on their first call).
  Status makeCurrent() {
    if (currentDriverId == id)
      return Status::success();
    Status st = check("cuCtxSetCurrent", api->cuCtxSetCurrent(context));
    if (st)
      currentDriverId = id;
    return st;
  }
};

Status CudaDriver::currentDevice(int &ordinal) {
  ordinal = 0;
  const DriverLibrary &lib = driverLibrary();
  if (!lib.error.empty())
    return Status::error(lib.error);
  CUdevice device = 0;
  CUresult r = lib.api.cuCtxGetDevice(&device);
  if (r != CUDA_SUCCESS) {
    // No current context on this thread (e.g. before any CUDA use): device 0.
    return Status::success();
  }
  ordinal = device;
  return Status::success();
}

Status CudaDriver::open(int ordinal, std::unique_ptr<CudaDriver> &out) {
  out.reset();
  const DriverLibrary &lib = driverLibrary();
  if (!lib.error.empty())
    return Status::error(lib.error);
  const DriverApi &api = lib.api;

  std::lock_guard<std::mutex> lock(openMutex());
  auto impl = std::make_unique<Impl>();
  impl->api = &api;

  CUresult r = api.cuInit(0);
  if (r == CUDA_ERROR_STUB_LIBRARY)
    return Status::error("no CUDA driver: the libcuda.so.1 found is the stub "
                         "library from the CUDA toolkit, not a real driver (" +
                         describeFailure(api, "cuInit", r) + ")");
  if (r == CUDA_ERROR_NO_DEVICE)
    return Status::error("no CUDA device (" +
                         describeFailure(api, "cuInit", r) + ")");
  if (Status st = impl->check("cuInit", r); !st)
    return st;
  if (Status st = impl->check("cuDriverGetVersion",
                              api.cuDriverGetVersion(&impl->driverVersion));
      !st)
    return st;

  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && count <= 0))
    return Status::error("no CUDA device");
  if (Status st = impl->check("cuDeviceGetCount", r); !st)
    return st;
  if (ordinal < 0 || ordinal >= count)
    return Status::error("CUDA device ordinal " + std::to_string(ordinal) +
                         " is out of range: " + std::to_string(count) +
                         " device(s) available (valid ordinals 0.." +
                         std::to_string(count - 1) + ")");

  if (Status st =
          impl->check("cuDeviceGet", api.cuDeviceGet(&impl->device, ordinal));
      !st)
    return st;

  char name[256] = {};
  if (Status st = impl->check(
          "cuDeviceGetName",
          api.cuDeviceGetName(name, static_cast<int>(sizeof(name)) - 1,
                              impl->device));
      !st)
    return st;
  impl->name = name;

  int major = 0, minor = 0;
  if (Status st = impl->check(
          "cuDeviceGetAttribute",
          api.cuDeviceGetAttribute(&impl->smCount,
                                   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   impl->device));
      !st)
    return st;
  if (Status st =
          impl->check("cuDeviceGetAttribute",
                      api.cuDeviceGetAttribute(
                          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                          impl->device));
      !st)
    return st;
  if (Status st =
          impl->check("cuDeviceGetAttribute",
                      api.cuDeviceGetAttribute(
                          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                          impl->device));
      !st)
    return st;
  impl->computeCapability = major * 10 + minor;

  if (Status st = impl->check(
          "cuDevicePrimaryCtxRetain",
          api.cuDevicePrimaryCtxRetain(&impl->context, impl->device));
      !st)
    return st;
  if (Status st =
          impl->check("cuCtxSetCurrent", api.cuCtxSetCurrent(impl->context));
      !st) {
    api.cuDevicePrimaryCtxRelease(impl->device);
    return st;
  }
  impl->id = nextDriverId.fetch_add(1);
  currentDriverId = impl->id;

  out.reset(new CudaDriver());
  out->impl = std::move(impl);
  return Status::success();
}

CudaDriver::~CudaDriver() {
  if (!impl || !impl->context)
    return;
  // The primary context is not popped by its release; unbind it from this
  // thread if this driver made it current here.
  if (currentDriverId == impl->id) {
    impl->api->cuCtxSetCurrent(nullptr);
    currentDriverId = 0;
  }
  impl->api->cuDevicePrimaryCtxRelease(impl->device);
}

std::string CudaDriver::deviceName() const { return impl->name; }

int CudaDriver::smCount() const { return impl->smCount; }

int CudaDriver::computeCapability() const { return impl->computeCapability; }

Status CudaDriver::loadModule(const std::string &ptx, CUmodule &module) {
  module = nullptr;
  if (ptx.empty())
    return Status::error(
        "cuModuleLoadDataEx not called: the PTX text is empty");
  if (Status st = impl->makeCurrent(); !st)
    return st;

  std::vector<char> errorLog(kJitErrorLogBytes, '\0');
  std::vector<char> infoLog(kJitInfoLogBytes, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  // Sizes are passed by value in the pointer slots (option type unsigned int).
  void *values[] = {
      errorLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(errorLog.size() - 1)),
      infoLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(infoLog.size() - 1))};
  CUresult r = impl->api->cuModuleLoadDataEx(
      &module, ptx.c_str(), sizeof(options) / sizeof(options[0]), options,
      values);
  if (r == CUDA_SUCCESS)
    return Status::success();

  module = nullptr;
  std::string msg = describeFailure(*impl->api, "cuModuleLoadDataEx", r);
  std::string err = logText(errorLog);
  std::string info = logText(infoLog);
  if (!err.empty())
    msg += "\nJIT error log:\n" + err;
  if (!info.empty())
    msg += "\nJIT info log:\n" + info;
  if (err.empty() && info.empty())
    msg += " (the JIT log is empty)";
  return Status::error(std::move(msg));
}

Status CudaDriver::getFunction(CUmodule module, const std::string &name,
                               CUfunction &fn) {
  fn = nullptr;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  CUresult r = impl->api->cuModuleGetFunction(&fn, module, name.c_str());
  if (r == CUDA_SUCCESS)
    return Status::success();
  fn = nullptr;
  return Status::error(describeFailure(*impl->api, "cuModuleGetFunction", r) +
                       " (kernel '" + name + "')");
}

Status CudaDriver::unloadModule(CUmodule module) {
  if (!module)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuModuleUnload", impl->api->cuModuleUnload(module));
}

Status CudaDriver::alloc(size_t bytes, CUdeviceptr &ptr) {
  ptr = 0;
  // cuMemAlloc rejects 0 bytes; a null pointer is a valid empty buffer and
  // free(0) is a no-op.
  if (bytes == 0)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  CUresult r = impl->api->cuMemAlloc(&ptr, bytes);
  if (r == CUDA_SUCCESS)
    return Status::success();
  ptr = 0;
  return Status::error(describeFailure(*impl->api, "cuMemAlloc", r) + " (" +
                       std::to_string(bytes) + " bytes)");
}

Status CudaDriver::free(CUdeviceptr ptr) {
  if (!ptr)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemFree", impl->api->cuMemFree(ptr));
}

Status CudaDriver::copyToDevice(CUdeviceptr dst, const void *src,
                                size_t bytes) {
  if (bytes == 0)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemcpyHtoD", impl->api->cuMemcpyHtoD(dst, src, bytes));
}

Status CudaDriver::copyToHost(void *dst, CUdeviceptr src, size_t bytes) {
  if (bytes == 0)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemcpyDtoH", impl->api->cuMemcpyDtoH(dst, src, bytes));
}

Status CudaDriver::copyDeviceToDeviceAsync(CUdeviceptr dst, CUdeviceptr src,
                                           size_t bytes, CUstream stream) {
  if (bytes == 0)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemcpyDtoDAsync",
                     impl->api->cuMemcpyDtoDAsync(dst, src, bytes, stream));
}

Status CudaDriver::memsetD8(CUdeviceptr dst, unsigned char value,
                            size_t bytes) {
  if (bytes == 0)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemsetD8", impl->api->cuMemsetD8(dst, value, bytes));
}

Status CudaDriver::allocAsync(size_t bytes, CUstream stream, CUdeviceptr &ptr) {
  ptr = 0;
  if (bytes == 0)
    return Status::success();
  if (!impl->api->cuMemAllocAsync || !impl->api->cuMemFreeAsync)
    return Status::error("cuMemAllocAsync not called: this driver does not "
                         "export it (CUDA >= 11.2 needed for workspaces)");
  if (Status st = impl->makeCurrent(); !st)
    return st;
  CUresult r = impl->api->cuMemAllocAsync(&ptr, bytes, stream);
  if (r == CUDA_SUCCESS)
    return Status::success();
  ptr = 0;
  return Status::error(describeFailure(*impl->api, "cuMemAllocAsync", r) +
                       " (" + std::to_string(bytes) + " bytes)");
}

Status CudaDriver::freeAsync(CUdeviceptr ptr, CUstream stream) {
  if (!ptr)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuMemFreeAsync", impl->api->cuMemFreeAsync(ptr, stream));
}

Status CudaDriver::launch(CUfunction fn, const unsigned grid[3],
                          const unsigned block[3], unsigned sharedBytes,
                          CUstream stream, void **args, bool programmatic) {
  if (!grid || !block)
    return Status::error("cuLaunchKernel not called: grid and block "
                         "dimensions must not be null");
  if (Status st = impl->makeCurrent(); !st)
    return st;
  // Past 48 KiB of dynamic shared memory a kernel must opt in first (a
  // host-side attribute of the function, not a stream operation: legal
  // during graph capture too).
  if (sharedBytes > kDefaultDynamicSharedBytes)
    if (CUresult r = impl->api->cuFuncSetAttribute(
            fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(sharedBytes));
        r != CUDA_SUCCESS)
      return Status::error(
          describeFailure(*impl->api, "cuFuncSetAttribute", r) + " (" +
          std::to_string(sharedBytes) + " bytes of dynamic shared memory)");
  const char *call = programmatic ? "cuLaunchKernelEx" : "cuLaunchKernel";
  CUresult r;
  if (programmatic) {
    if (!impl->api->cuLaunchKernelEx)
      return Status::error("cuLaunchKernelEx not called: this driver does not "
                           "export it (a programmatic dependent launch needs "
                           "CUDA 12.0 or later)");
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{grid[0],     grid[1], grid[2], block[0], block[1],
                          block[2],    sharedBytes, stream, &attr, 1};
    r = impl->api->cuLaunchKernelEx(&config, fn, args, nullptr);
  } else {
    r = impl->api->cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0],
                                  block[1], block[2], sharedBytes, stream, args,
                                  nullptr);
  }
  if (r == CUDA_SUCCESS)
    return Status::success();
  return Status::error(
      describeFailure(*impl->api, call, r) + " (grid " +
      std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
      std::to_string(grid[2]) + ", block " + std::to_string(block[0]) + "x" +
      std::to_string(block[1]) + "x" + std::to_string(block[2]) + ", shared " +
      std::to_string(sharedBytes) + " bytes)");
}

Status CudaDriver::createStream(CUstream &stream) {
  stream = nullptr;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  // A blocking stream (CU_STREAM_DEFAULT, not CU_STREAM_NON_BLOCKING): the
  // copies and memsets above run on the legacy default stream, and a blocking
  // stream is ordered against it, so copyToDevice/memsetD8 followed by a
  // launch on this stream (or a launch followed by copyToHost) needs no extra
  // synchronize. Capturing the stream still works; only legacy-stream work
  // issued while a capture is in progress is rejected by the driver.
  CUresult r = impl->api->cuStreamCreate(&stream, CU_STREAM_DEFAULT);
  if (r == CUDA_SUCCESS)
    return Status::success();
  stream = nullptr;
  return Status::error(describeFailure(*impl->api, "cuStreamCreate", r));
}

Status CudaDriver::destroyStream(CUstream stream) {
  if (!stream) // The legacy default stream is never destroyed.
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuStreamDestroy", impl->api->cuStreamDestroy(stream));
}

Status CudaDriver::synchronize(CUstream stream) {
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuStreamSynchronize",
                     impl->api->cuStreamSynchronize(stream));
}

Status CudaDriver::beginCapture(CUstream stream) {
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check(
      "cuStreamBeginCapture",
      impl->api->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

Status CudaDriver::endCapture(CUstream stream, CUgraph &graph) {
  graph = nullptr;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  CUresult r = impl->api->cuStreamEndCapture(stream, &graph);
  if (r == CUDA_SUCCESS)
    return Status::success();
  graph = nullptr;
  return Status::error(describeFailure(*impl->api, "cuStreamEndCapture", r));
}

Status CudaDriver::instantiate(CUgraph graph, CUgraphExec &exec) {
  exec = nullptr;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  const DriverApi &api = *impl->api;
  if (api.cuGraphInstantiateWithFlags) {
    CUresult r = api.cuGraphInstantiateWithFlags(&exec, graph, 0);
    if (r == CUDA_SUCCESS)
      return Status::success();
    exec = nullptr;
    return Status::error(
        describeFailure(api, "cuGraphInstantiateWithFlags", r));
  }
  char log[1024] = {};
  CUgraphNode errorNode = nullptr;
  CUresult r =
      api.cuGraphInstantiate_v2(&exec, graph, &errorNode, log, sizeof(log) - 1);
  if (r == CUDA_SUCCESS)
    return Status::success();
  exec = nullptr;
  std::string msg = describeFailure(api, "cuGraphInstantiate", r);
  if (log[0])
    msg += std::string(": ") + log;
  return Status::error(std::move(msg));
}

Status CudaDriver::launchGraph(CUgraphExec exec, CUstream stream) {
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuGraphLaunch", impl->api->cuGraphLaunch(exec, stream));
}

Status CudaDriver::destroyGraph(CUgraph graph, CUgraphExec exec) {
  if (!graph && !exec)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  // Destroy both even if the first fails; report the first failure.
  Status result = Status::success();
  if (exec)
    result =
        impl->check("cuGraphExecDestroy", impl->api->cuGraphExecDestroy(exec));
  if (graph) {
    Status st = impl->check("cuGraphDestroy", impl->api->cuGraphDestroy(graph));
    if (result && !st)
      result = std::move(st);
  }
  return result;
}

Status CudaDriver::createEvent(CUevent &event) {
  event = nullptr;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  CUresult r = impl->api->cuEventCreate(&event, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS)
    return Status::success();
  event = nullptr;
  return Status::error(describeFailure(*impl->api, "cuEventCreate", r));
}

Status CudaDriver::destroyEvent(CUevent event) {
  if (!event)
    return Status::success();
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuEventDestroy", impl->api->cuEventDestroy(event));
}

Status CudaDriver::recordEvent(CUevent event, CUstream stream) {
  if (Status st = impl->makeCurrent(); !st)
    return st;
  return impl->check("cuEventRecord", impl->api->cuEventRecord(event, stream));
}

Status CudaDriver::elapsedMs(CUevent start, CUevent end, float &ms) {
  ms = 0.0f;
  if (Status st = impl->makeCurrent(); !st)
    return st;
  if (Status st =
          impl->check("cuEventSynchronize", impl->api->cuEventSynchronize(end));
      !st)
    return st;
  return impl->check("cuEventElapsedTime",
                     impl->api->cuEventElapsedTime(&ms, start, end));
}
