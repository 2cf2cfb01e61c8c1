// build/problems/urdf --model FILE.urdf [--dynamics auto|energy|recursive]
//     [--base fixed|floating] and the common command line (run.hpp).
#include "urdf.hpp"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

const char* const kUsage =
    "usage: urdf --model FILE.urdf [--dynamics auto|energy|recursive] "
    "[--base fixed|floating] [common options; --help with --model lists "
    "them and the robot's joints]\n";

// Takes `--name VALUE` or `--name=VALUE` out of args; false when absent.
bool Take(std::vector<char*>* args, const char* name, std::string* value) {
  const std::string flag = std::string("--") + name;
  for (size_t i = 1; i < args->size(); ++i) {
    const std::string a = (*args)[i];
    if (a == flag) {
      if (i + 1 >= args->size())
        throw std::invalid_argument(flag + " needs a value");
      *value = (*args)[i + 1];
      args->erase(args->begin() + static_cast<long>(i),
                  args->begin() + static_cast<long>(i) + 2);
      return true;
    }
    if (a.rfind(flag + "=", 0) == 0) {
      *value = a.substr(flag.size() + 1);
      args->erase(args->begin() + static_cast<long>(i));
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string model, dynamics = "auto", base = "fixed";
  try {
    const bool has_model = Take(&args, "model", &model);
    Take(&args, "dynamics", &dynamics);
    Take(&args, "base", &base);
    if (!has_model) {
      for (char* a : args)
        if (std::strcmp(a, "--help") == 0) {
          std::cout << kUsage;
          return 0;
        }
      std::cerr << "urdf: --model FILE.urdf is required\n" << kUsage;
      return 2;
    }
    if (base != "fixed" && base != "floating")
      throw std::invalid_argument("--base: unknown base '" + base +
                                  "'; valid: fixed, floating");
    const daedalus::mb::DynamicsForm form =
        daedalus::mb::DynamicsFormFromString(dynamics);
    const bool floating = base == "floating";
    return daedalus::run(
        [&] { return daedalus::problems::UrdfProblem(model, form, floating); },
        static_cast<int>(args.size()), args.data());
  } catch (const std::exception& e) {
    std::cerr << "urdf: " << e.what() << "\n" << kUsage;
    return 2;
  }
}
