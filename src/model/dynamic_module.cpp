#include "model/dynamic_module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

// Folders this library was configured with (src/CMakeLists.txt).
#ifndef DAEDALUS_MODULE_BUILD_DIR
#define DAEDALUS_MODULE_BUILD_DIR ""
#endif
#ifndef DAEDALUS_MODULE_INSTALL_DIR
#define DAEDALUS_MODULE_INSTALL_DIR ""
#endif

namespace daedalus::internal {

void* LoadModuleEntry(const ModuleSearch& search, std::string* error) {
  std::vector<std::string> paths;
  const char* env = std::getenv(search.env_var.c_str());
  if (env != nullptr && *env != '\0') {
    paths.emplace_back(env);
  } else {
    paths.push_back(search.file);
    for (const std::string dir :
         {DAEDALUS_MODULE_BUILD_DIR, DAEDALUS_MODULE_INSTALL_DIR})
      if (!dir.empty()) paths.push_back(dir + "/" + search.file);
  }
  std::string tried;
  for (const std::string& path : paths) {
    // RTLD_LOCAL: the module's SuiteSparse or MPI symbols stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      // dlerror() names the file itself when the path has a slash.
      const char* why = dlerror();
      const std::string reason = why ? why : "not loadable";
      tried +=
          "\n  " +
          (reason.rfind(path + ":", 0) == 0 ? reason : path + ": " + reason);
      continue;
    }
    if (void* entry = dlsym(handle, search.entry.c_str())) return entry;
    tried += "\n  " + path + ": has no function '" + search.entry +
             "' (not a module of this Daedalus)";
    dlclose(handle);
  }
  *error = search.what + " is in the module " + search.file +
           ", which could not be loaded; tried:" + tried +
           "\nBuild it with the library (cmake --build <build> --target " +
           search.file.substr(3, search.file.size() - 6) +
           "), install Daedalus with it (lib/daedalus/), or set " +
           search.env_var + " to its path.";
  return nullptr;
}

}  // namespace daedalus::internal
