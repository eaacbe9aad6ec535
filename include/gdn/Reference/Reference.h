//===- Reference.h - fp64 reference recurrence ------------------*- C++ -*-===//
//
// The oracle of every test: the Gated Delta Rule recurrence computed in double
// precision, straight from the math of docs/math.md §1 (FLA's naive
// recurrence), with no dependence on MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_REFERENCE_REFERENCE_H
#define GDN_REFERENCE_REFERENCE_H

#include <cstdint>
#include <string>
#include <vector>

namespace gdn {
namespace reference {

enum class Decay { None, LogSpace, FusedGating };
enum class Beta { One, Given, Logits };
enum class StateLayout { KV, VK };
/// Storage dtype of a buffer the recurrence reads back (round to nearest even).
/// E4M3Rows: e4m3 with a scale a row (V column; docs/math.md §6).
enum class Storage { F32, BF16, F16, E4M3Rows };

/// Shapes and options of one recurrence. N sequences of T tokens, H q/k heads,
/// HV value heads (HV % H == 0; value head hv uses q/k head hv / (HV / H)),
/// key width K, value width V.
struct Problem {
  int64_t N = 1, T = 1, H = 1, HV = 1, K = 1, V = 1;
  Decay decay = Decay::None;
  Beta beta = Beta::One;
  bool qkL2Norm = false;
  bool allowNegEigval = false; ///< with Beta::Logits: beta = 2 sigmoid(b)
  /// KDA: the decay is per key channel, S[k, :] <- exp(g[k]) S[k, :]; g and a
  /// are [.., HV, K] and dt_bias [HV * K].
  bool perKeyDecay = false;
  /// beta (or its logits) per value channel: [.., HV, V].
  bool perChannelBeta = false;
  double scale = 1.0; ///< applied to q after the optional L2 norm
  StateLayout layout = StateLayout::KV;
  bool hasInitialState = false;
  /// 0: one state per sequence [N, HV, ...]. > 0: a pool of that many slots
  /// [slots, HV, ...] addressed by Inputs::stateIndices; an index < 0 is a
  /// padding row (no state read or written, output rows zero).
  int64_t slots = 0;
  /// Packed tokens: q, k [1, T, H, K] etc. hold T tokens in all, sequence n
  /// owning [cuSeqlens[n], cuSeqlens[n + 1]) (Inputs::cuSeqlens, N + 1).
  bool varlen = false;
  /// Verify: store the state after every token. 0 rows: none. Sequence n
  /// writes row n, or with intermediateIndexed row Inputs::intermediateIndices[n]
  /// (< 0: none); step s = the state after its s-th token (s < steps).
  int64_t intermediateRows = 0, intermediateSteps = 0;
  bool intermediateIndexed = false;
  /// EAGLE tree verify (with intermediateRows > 0): Inputs::parentTokens
  /// [N, steps] names each step's parent p; step s > 0 of a sequence with a
  /// buffer row starts from the carried state when p = s - 1, from the stored
  /// state of step p (rounded to intermediateStorage, as stored) when
  /// 0 <= p < s - 1, and from the initial state otherwise (p < 0 or p >= s:
  /// a root). Steps past the table and rows without a buffer row carry.
  bool parentTable = false;
  Storage intermediateStorage = Storage::F32;
  /// Prefix-cache checkpoints: with checkpointInterval > 0, sequence n
  /// stores the state after its ((j + 1) * checkpointInterval)-th token in
  /// row lo + j of [checkpointRows, HV, ...] while lo + j < hi, lo =
  /// clamp(Inputs::checkpointOffsets[n], 0, rows), hi =
  /// clamp(offsets[n + 1], lo, rows). Padding rows store none.
  int64_t checkpointInterval = 0, checkpointRows = 0;
  /// Replay windows of L = windowSteps steps (0: none; a decay and a beta a
  /// head): sequence n's s-th token, s < L, is recorded in row
  /// stateIndices[n] (n without a pool; padding rows record nothing), see
  /// Outputs::kWindow.
  int64_t windowSteps = 0;
};

/// Inputs, row-major, as doubles (storage-dtype values widened exactly).
/// Vectors that the problem does not use may be empty.
struct Inputs {
  std::vector<double> q, k;          ///< [N, T, H, K]
  std::vector<double> v;             ///< [N, T, HV, V]
  std::vector<double> g;             ///< [N, T, HV] (or [.., HV, K]), log-space decay
  std::vector<double> a;             ///< [N, T, HV] (or [.., HV, K]), fused-gating input
  std::vector<double> A_log;         ///< [HV]
  std::vector<double> dt_bias;       ///< [HV] (or [HV * K] with perKeyDecay)
  std::vector<double> beta;          ///< [N, T, HV] (or [.., HV, V]), given beta or logits b
  std::vector<double> initialState;  ///< [N or slots, HV, K, V] (kv) or [.., HV, V, K] (vk)
  std::vector<int64_t> stateIndices; ///< [N] pool slot per sequence (slots > 0)
  std::vector<int64_t> cuSeqlens;    ///< [N + 1] sequence starts (varlen)
  std::vector<int64_t> intermediateIndices; ///< [N] (intermediateIndexed)
  std::vector<int64_t> parentTokens;        ///< [N, steps] (parentTable)
  std::vector<int64_t> checkpointOffsets;   ///< [N + 1] (checkpointInterval)
};

struct Outputs {
  std::vector<double> o;          ///< [N, T, HV, V]
  /// Same layout as the initial state. With a pool: the whole pool, slots
  /// no sequence uses keep their initial values (zero without one).
  std::vector<double> finalState;
  /// [rows, steps, HV, K, V] (kv) or [.., HV, V, K] (vk); unwritten entries 0.
  std::vector<double> intermediate;
  /// [checkpointRows, HV, ...] in the state layout; unwritten rows 0, and
  /// checkpointWritten[row] says which were written.
  std::vector<double> checkpoints;
  std::vector<bool> checkpointWritten;
  /// Replay windows (Problem::windowSteps = L > 0), rows = slots or N: k as
  /// given (before the L2 norm) [rows, H, L, K], v [rows, HV, L, V], the
  /// token's log decay g (0 without one) and its beta (1 without one), as
  /// the recurrence takes them, [rows, HV, L]; windowWritten[row * L + s]
  /// says which steps were written (the others 0).
  std::vector<double> kWindow, vWindow, gWindow, betaWindow;
  std::vector<bool> windowWritten;
};

/// softplus(x) = log(1 + exp(x)) for x <= 20, x otherwise (FLA/SGLang).
double softplus(double x);
/// Fused gating: g = -exp(A_log) * softplus(a + dt_bias); 0 when softplus is 0
/// (so that exp(A_log) = inf never makes NaN).
double fusedGate(double a, double aLog, double dtBias);
double sigmoid(double x);
/// x rounded to `storage` (round to nearest even, overflow to inf; for
/// E4M3Rows: to e4m3, saturating at 448, without the row scale).
double roundTo(Storage storage, double x);

/// Runs the recurrence. Returns an empty string on success, or a message
/// naming the first input vector whose size does not match the problem.
std::string run(const Problem &p, const Inputs &in, Outputs &out);

/// Error metrics used by every check: max |a - b| and RMS-relative
/// ||a - b||_2 / ||b||_2 (FLA's metric; 0 when both are zero).
double maxAbsError(const std::vector<double> &a, const std::vector<double> &b);
double rmsRelativeError(const std::vector<double> &a,
                        const std::vector<double> &b);

} // namespace reference
} // namespace gdn

#endif // GDN_REFERENCE_REFERENCE_H
