// A stop flag that the longest evaluations read between their sweeps
// (issue 40): on a large model in the energy form one evaluation of the
// dynamics on tangent numbers takes seconds (chain_reduced --bodies 200
// --dynamics energy: its mass matrix by 200 second-order sweeps of an
// O(N) energy), so a signal would wait for it. The DAE form's tangent
// Jacobian installs SimulationOptions::stop for the current thread while
// it runs; EnergyDerivativesBySweeps reads it before each sweep and throws
// "stop requested" (the SUNDIALS callback's trampoline turns that into an
// interrupted run).
#pragma once

#include <atomic>

namespace daedalus::internal {

/// The current thread's flag, or null.
const std::atomic<int>* CurrentEvalStop();

/// Installs `stop` for the current thread while alive (the previous one
/// is restored).
class ScopedEvalStop {
 public:
  explicit ScopedEvalStop(const std::atomic<int>* stop);
  ~ScopedEvalStop();
  ScopedEvalStop(const ScopedEvalStop&) = delete;
  ScopedEvalStop& operator=(const ScopedEvalStop&) = delete;

 private:
  const std::atomic<int>* previous_;
};

/// @throws std::invalid_argument("stop requested") when the current
/// thread's flag holds a signal.
void ThrowIfEvalStopped();

}  // namespace daedalus::internal
