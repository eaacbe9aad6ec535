/* c-host.c: a C program that compiles a gdn.recurrent with the C API of an
 * installed gdn-mlir and runs it on the CPU (docs/Embedding.md).
 *   cc c-host.c $(pkg-config --cflags --libs gdn) -o c-host
 * One token of one head (N = T = H = HV = 1, K = 32, V = 8, f32), no initial
 * state, no decay, beta = 1: the state after the token is k v^T, so
 * o = v (k . q) K^-0.5. Prints OK when the kernel's o matches that. */
#include "gdn-c/GDN.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_DIM = 32, V_DIM = 8 };

static int fail(const char *what) {
  fprintf(stderr, "c-host: %s: %s\n", what, gdnGetLastError());
  return 1;
}

int main(void) {
  printf("gdn %s\n", gdnVersion());
  gdnCompiler compiler = NULL;
  if (gdnCompilerCreate(&compiler) != GDN_OK)
    return fail("gdnCompilerCreate");

  gdnRecurrentDesc desc;
  gdnRecurrentDescInit(&desc);
  desc.N = 1, desc.T = 1, desc.H = 1, desc.HV = 1;
  desc.K = K_DIM, desc.V = V_DIM;
  desc.input_dtype = desc.gate_dtype = desc.beta_dtype = GDN_DTYPE_F32;
  desc.state_dtype = desc.intermediate_dtype = GDN_DTYPE_F32;
  gdnKernel kernel = NULL;
  if (gdnCompileDesc(compiler, &desc, GDN_TARGET_CPU, NULL, &kernel) != GDN_OK)
    return fail("gdnCompileDesc");

  /* q, k, v, o: one host buffer each, sized by the kernel. */
  float q[K_DIM], k[K_DIM], v[V_DIM], o[V_DIM];
  float *bufs[] = {q, k, v, o};
  const char *names[] = {"q", "k", "v", "o"};
  const int64_t bytes[] = {sizeof q, sizeof k, sizeof v, sizeof o};
  int n = gdnKernelNumArguments(kernel);
  if (n != 4) {
    fprintf(stderr, "c-host: %d arguments, expected 4\n", n);
    return 1;
  }
  for (int i = 0; i < n; ++i)
    if (strcmp(gdnKernelArgumentName(kernel, i), names[i]) != 0 ||
        gdnKernelArgumentBytes(kernel, i) != bytes[i]) {
      fprintf(stderr, "c-host: argument %d is %s, %lld bytes\n", i,
              gdnKernelArgumentName(kernel, i),
              (long long)gdnKernelArgumentBytes(kernel, i));
      return 1;
    }
  double dot = 0;
  for (int i = 0; i < K_DIM; ++i) {
    q[i] = 0.05f * (float)(i % 7) - 0.1f;
    k[i] = 0.03f * (float)(i % 5) + 0.02f;
    dot += (double)q[i] * k[i];
  }
  for (int j = 0; j < V_DIM; ++j) {
    v[j] = 0.25f * (float)j - 0.8f;
    o[j] = NAN;
  }
  void *args[4];
  for (int i = 0; i < n; ++i)
    args[i] = bufs[i];
  if (gdnKernelRunHost(kernel, args, n) != GDN_OK)
    return fail("gdnKernelRunHost");

  for (int j = 0; j < V_DIM; ++j) {
    double want = v[j] * dot / sqrt((double)K_DIM);
    if (!(fabs(o[j] - want) <= 1e-5 + 1e-5 * fabs(want))) {
      fprintf(stderr, "c-host: o[%d] = %g, expected %g\n", j, o[j], want);
      return 1;
    }
  }
  gdnCompilerDestroy(compiler);
  printf("OK\n");
  return 0;
}
