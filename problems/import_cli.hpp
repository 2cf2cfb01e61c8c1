// The command line shared by the executables that read their model from a
// file (build/problems/urdf, build/problems/mjcf): their own flags
// (--model FILE and the importer's options) taken out of the command line
// before the common one (run.hpp), listed by --help with or without
// --model.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/run.hpp"

namespace daedalus::problems {

/// One flag of an importer executable: `--name VALUE` (or `--name=VALUE`),
/// or `--name` alone when `value` is empty (a switch, "1" when given).
struct ImportFlag {
  std::string name;
  std::string value;  ///< e.g. "FILE.urdf"; empty for a switch
  std::string help;
  std::string fallback = {};  ///< the default
};

/// The --help text of the importer's own flags.
inline std::string ImportFlagsHelp(const std::string& program,
                                   const std::vector<ImportFlag>& flags) {
  std::ostringstream os;
  os << program << "'s own flags (then the common options below):\n";
  for (const ImportFlag& f : flags) {
    std::string head = "  --" + f.name + (f.value.empty() ? "" : " " + f.value);
    os << head << std::string(head.size() < 30 ? 30 - head.size() : 1, ' ')
       << f.help
       << (f.fallback.empty() ? std::string() : " (default " + f.fallback + ")")
       << "\n";
  }
  return os.str();
}

/// A gravity flag's value: "G" (magnitude, along -z) or "gx,gy,gz"
/// [m/s^2]. @throws std::invalid_argument naming the text.
inline Eigen::Vector3d ParseGravity(const std::string& text) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const double x = std::strtod(part.c_str(), &end);
    if (part.empty() || end == part.c_str() || *end != '\0' ||
        !std::isfinite(x))
      throw std::invalid_argument("--gravity '" + text +
                                  "': give a finite magnitude G (gravity -G "
                                  "along z) or three components gx,gy,gz");
    v.push_back(x);
  }
  if (v.size() == 1) return Eigen::Vector3d(0.0, 0.0, -v[0]);
  if (v.size() == 3) return Eigen::Vector3d(v[0], v[1], v[2]);
  throw std::invalid_argument("--gravity '" + text + "': give G or gx,gy,gz (" +
                              std::to_string(v.size()) + " numbers given)");
}

/// A finite number given to `flag`. @throws std::invalid_argument naming
/// the flag and the text.
inline double ParseNumber(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(x))
    throw std::invalid_argument(flag + " '" + text + "': give a finite number");
  return x;
}

/// main() of an importer executable: takes `flags` out of the command line
/// (the first must be "model"), builds the problem with `make(values)`
/// (values by flag name, defaults filled in) and runs it with the rest;
/// --help lists the own flags first. Exit status as run().
/// The ground-contact flags both importers take (--ground, --ground-height,
/// --ground-restitution, --ground-mu) into their ImportOptions.
template <class Options>
void SetGroundOptions(const std::map<std::string, std::string>& v, Options* o) {
  o->ground = v.count("ground") != 0;
  o->ground_height = ParseNumber("--ground-height", v.at("ground-height"));
  o->ground_restitution =
      ParseNumber("--ground-restitution", v.at("ground-restitution"));
  o->ground_mu = ParseNumber("--ground-mu", v.at("ground-mu"));
}

inline int RunImporter(
    int argc,
    char** argv,
    const std::string& program,
    const std::vector<ImportFlag>& flags,
    const std::function<Problem(const std::map<std::string, std::string>&)>&
        make) {
  std::vector<char*> args(argv, argv + argc);
  std::map<std::string, std::string> values;
  for (const ImportFlag& f : flags)
    if (!f.fallback.empty()) values[f.name] = f.fallback;
  bool help = false, has_model = false;
  try {
    for (const ImportFlag& f : flags) {
      const std::string flag = "--" + f.name;
      for (size_t i = 1; i < args.size();) {
        const std::string a = args[i];
        if (f.value.empty() && a == flag) {
          values.insert_or_assign(f.name, std::string(1, '1'));
          args.erase(args.begin() + static_cast<long>(i));
        } else if (!f.value.empty() && a == flag) {
          if (i + 1 >= args.size())
            throw std::invalid_argument(flag + " needs a value (" + f.value +
                                        ")");
          values[f.name] = args[i + 1];
          args.erase(args.begin() + static_cast<long>(i),
                     args.begin() + static_cast<long>(i) + 2);
        } else if (!f.value.empty() && a.rfind(flag + "=", 0) == 0) {
          values[f.name] = a.substr(flag.size() + 1);
          args.erase(args.begin() + static_cast<long>(i));
        } else {
          ++i;
        }
      }
    }
    for (size_t i = 1; i < args.size(); ++i)
      help |= std::string(args[i]) == "--help";
    has_model = values.count("model") != 0;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n(see --help)\n";
    return 2;
  }
  const std::string own = ImportFlagsHelp(program, flags);
  if (!has_model) {
    if (help) {
      std::cout << own
                << "With --model FILE, --help also lists the common options "
                   "and what the file holds.\n";
      return 0;
    }
    std::cerr << program << ": --model is required\n" << own;
    return 2;
  }
  return run(
      [&] {
        Problem p = make(values);
        p.description = own + "\n" + p.description;
        return p;
      },
      static_cast<int>(args.size()), args.data());
}

}  // namespace daedalus::problems
