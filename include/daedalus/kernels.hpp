// Native kernels: straight-line C++ generated, when a problem executable
// is built, from the compiled programs of its model (docs/conventions.md,
// "Compiled evaluation"). The build runs the problem once with
// --emit-kernels FILE and compiles FILE into the executable, whose
// programs then run as native code instead of through the interpreter.
// A kernel is used only for the program it was generated from (matched by
// a fingerprint of the whole program), so a stale or foreign kernel is
// never run. A program that hands its problem to daedalus::run calls
// nothing here: daedalus_add_problem() (cmake/DaedalusProblem.cmake) runs
// it with --emit-kernels and compiles the file in. A program that calls
// Simulate() itself writes the file with EmitNativeKernels()
// (daedalus/emit_kernels.hpp) and compiles
// it into a second build of itself (docs/using_as_a_package.md, "Native
// kernels without daedalus_add_problem").
#pragma once

#include <cstddef>
#include <cstdint>

namespace daedalus {

/// One generated kernel and the program it implements.
struct KernelEntry {
  std::uint64_t fingerprint;
  int num_instructions;
  int num_outputs;
  void (*run)(const double* in, double* out);
};

/// Registers generated kernels; called by generated code during static
/// initialization. Returns true.
bool RegisterKernels(const KernelEntry* entries, std::size_t count);

}  // namespace daedalus
