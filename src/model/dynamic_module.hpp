// Shared modules of Daedalus loaded on first use (dlopen): the SuiteSparse
// stack (libdaedalus_sparse.so, kkt/sparse_backend.hpp) and the MPI
// transport of ensembles (libdaedalus_mpi.so, cli/ensemble.hpp). Linking
// them into every executable would map 25 more shared libraries at each
// start, which costs more than most runs (docs/performance.md).
#pragma once

#include <string>

namespace daedalus::internal {

/// Where a module is looked for.
struct ModuleSearch {
  std::string file;     ///< e.g. "libdaedalus_sparse.so"
  std::string env_var;  ///< a path here is the only one tried when set
  std::string what;     ///< for messages: "the sparse linear algebra (...)"
  std::string entry;    ///< the exported C function to return
};

/// Opens the module and returns the address of its entry function. Tries
/// $env_var if set (and nothing else); otherwise the bare file name (the
/// executable's RUNPATH, which an installed Daedalus sets, then
/// LD_LIBRARY_PATH and the system's folders), then the build tree's
/// lib/daedalus/ and the install prefix's lib/daedalus/ that this library
/// was configured with. Returns null with `error` naming every path tried,
/// why each failed and how to fix it. A module stays loaded for the life
/// of the process.
void* LoadModuleEntry(const ModuleSearch& search, std::string* error);

}  // namespace daedalus::internal
