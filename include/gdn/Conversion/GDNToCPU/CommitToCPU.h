//===- CommitToCPU.h - gdn.commit to scf loops ------------------*- C++ -*-===//
#ifndef GDN_CONVERSION_GDNTOCPU_COMMITTOCPU_H
#define GDN_CONVERSION_GDNTOCPU_COMMITTOCPU_H

namespace mlir {
class RewritePatternSet;
namespace gdn {

/// Adds the pattern that rewrites a memref-form gdn.commit into scf loops
/// (convert-gdn-to-cpu).
void populateCommitToCPUPatterns(RewritePatternSet &patterns);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOCPU_COMMITTOCPU_H
