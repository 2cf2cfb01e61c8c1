// Loading the SuiteSparse module (kkt/sparse_backend.hpp).
#include "kkt/sparse_backend.hpp"

#include <stdexcept>
#include <string>

#include "model/dynamic_module.hpp"

namespace daedalus::internal {

namespace {

using Entry = const SparseBackend* (*)(int abi);

const SparseBackend* Load(std::string* error) {
  const ModuleSearch search{
      "libdaedalus_sparse.so", "DAEDALUS_SPARSE_MODULE",
      "The sparse linear algebra of Daedalus (KLU, CHOLMOD, SPQR: "
      "--kkt sparse, --linear-solver klu, sparse models)",
      kSparseModuleEntry};
  void* entry = LoadModuleEntry(search, error);
  if (entry == nullptr) return nullptr;
  const SparseBackend* backend =
      reinterpret_cast<Entry>(entry)(kSparseModuleAbi);
  if (backend == nullptr)
    *error =
        "the module libdaedalus_sparse.so that was found belongs to "
        "another version of Daedalus (interface version differs from " +
        std::to_string(kSparseModuleAbi) +
        "); rebuild or reinstall Daedalus, or set "
        "DAEDALUS_SPARSE_MODULE to the module built with this one";
  return backend;
}

}  // namespace

const SparseBackend& SparseModule() {
  // Loaded once per process; a failure is reported at every use.
  static std::string error;
  static const SparseBackend* const backend = Load(&error);
  if (backend == nullptr) throw std::runtime_error(error);
  return *backend;
}

}  // namespace daedalus::internal
