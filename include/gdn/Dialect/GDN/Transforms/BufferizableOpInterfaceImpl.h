//===- BufferizableOpInterfaceImpl.h - gdn bufferization --------*- C++ -*-===//
//
// One-shot bufferization of the tensor form of gdn.recurrent into its memref
// form (external model of bufferization::BufferizableOpInterface).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_DIALECT_GDN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define GDN_DIALECT_GDN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace gdn {

/// Attaches the BufferizableOpInterface to gdn.recurrent and gdn.commit when
/// the gdn dialect is loaded. registerGDNDialect (InitAllGDN.h) calls it.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace gdn
} // namespace mlir

#endif // GDN_DIALECT_GDN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
