// build/problems/chain_reduced [--bodies N] [--dynamics recursive|energy|auto]
// and the common command line (run.hpp). See chain_reduced.hpp.
#include "chain_reduced.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string dynamics = "recursive";
  // The build's kernel pass (--emit-kernels) records the energy form: the
  // recursive form has no compiled programs to emit.
  for (size_t i = 1; i < args.size(); ++i)
    if (std::string(args[i]).rfind("--emit-kernels", 0) == 0)
      dynamics = "energy";
  // --dynamics NAME or --dynamics=NAME, taken out before the common
  // options are parsed.
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--dynamics") {
      if (i + 1 >= args.size()) {
        std::cerr << "chain_reduced: --dynamics needs a value (recursive, "
                     "energy or auto)\n";
        return 2;
      }
      dynamics = args[i + 1];
      args.erase(args.begin() + static_cast<long>(i),
                 args.begin() + static_cast<long>(i) + 2);
      break;
    }
    if (a.rfind("--dynamics=", 0) == 0) {
      dynamics = a.substr(11);
      args.erase(args.begin() + static_cast<long>(i));
      break;
    }
    if (a == "--help")
      std::cout << "chain_reduced: --dynamics recursive|energy|auto (default "
                   "recursive: the multibody chain, ABA, up to "
                << daedalus::problems::kChainReducedMax
                << " links; energy: hand-written energies, up to "
                << daedalus::problems::kChainReducedEnergyMax
                << " links; auto: recursive from "
                << daedalus::mb::kAutoRecursiveVelocities << " links)\n";
  }
  daedalus::mb::DynamicsForm form;
  try {
    form = daedalus::mb::DynamicsFormFromString(dynamics);
  } catch (const std::exception& e) {
    std::cerr << "chain_reduced: --dynamics: " << e.what() << "\n";
    return 2;
  }
  return daedalus::run(
      {{"bodies", 10, 1, daedalus::problems::kChainReducedMax,
        "number of links (at most 200 with --dynamics energy)"}},
      [form](const std::vector<daedalus::IntOption>& o) {
        return daedalus::problems::ChainReducedProblem(o[0].value, form);
      },
      static_cast<int>(args.size()), args.data());
}
