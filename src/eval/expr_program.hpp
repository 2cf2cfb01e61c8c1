// A straight-line program compiled from the outputs of an expression graph:
// the nodes those outputs need, in topological order, each one
// instruction that writes one slot of a scratch array. Run() is a single
// loop over the instructions, with no user-function calls, no dual
// numbers and no allocation; sin and cos of the same argument share one
// instruction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/expr_graph.hpp"

namespace daedalus::internal {

class ExprProgram {
 public:
  ExprProgram() = default;
  /// Compiles the cone of `outputs`. Input i of Run() is the graph's input
  /// number inputs[i]. @throws std::logic_error when an output needs an
  /// input number that `inputs` does not list.
  ExprProgram(const ExprGraph& g,
              const std::vector<int>& inputs,
              const std::vector<int>& outputs);

  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return static_cast<int>(out_slots_.size()); }
  int num_instructions() const { return static_cast<int>(code_.size()); }
  std::size_t scratch_size() const { return num_slots_; }

  /// Sizes `scratch` for this program and writes its constants (once per
  /// scratch array; Run() never overwrites them).
  void InitScratch(std::vector<double>* scratch) const;
  /// out[k] = output k at inputs `in`. `scratch` was prepared by
  /// InitScratch for this program.
  void Run(const double* in, double* out, double* scratch) const;

  /// Whether output k is the constant 0 whatever the inputs (a structural
  /// zero, e.g. of a Jacobian).
  bool OutputIsZero(int k) const { return out_zero_[k] != 0; }

  /// A hash of the whole program (instructions, constants, outputs): the
  /// key of its generated kernel (kernels.hpp).
  std::uint64_t fingerprint() const { return fingerprint_; }
  /// Whether Run() executes a registered native kernel.
  bool native() const { return native_ != nullptr; }
  /// The program as a C++ function `void name(const double* in, double*
  /// out)` performing the same operations in the same order (so it gives
  /// the interpreter's results bit for bit).
  std::string EmitCpp(const std::string& name) const;

 private:
  friend class ProgramCollector;
  struct Instr {
    std::uint32_t op;  // Op, or kSinCosOp
    std::uint32_t dst, a, b;
  };
  int num_inputs_ = 0;
  std::size_t num_slots_ = 0;
  std::vector<std::pair<std::uint32_t, double>> constants_;  // slot, value
  std::vector<Instr> code_;
  // A knot operation's table (b of its instruction numbers one): its knot
  // set, coefficient slots (kPwLinear, kPwSlope) and spline j (kHat,
  // kHatSlope).
  struct KnotRef {
    std::uint32_t knots = 0;
    std::vector<std::uint32_t> slots;
    int j = 0;
  };
  std::vector<std::vector<double>> knots_;
  std::vector<KnotRef> knot_refs_;
  std::vector<std::uint32_t> out_slots_;
  std::vector<char> out_zero_;
  std::uint64_t fingerprint_ = 0;
  void (*native_)(const double*, double*) = nullptr;
};

/// Native kernels on or off for the whole process (--evaluator
/// interpreted turns them off to check them against the interpreter).
void SetNativeKernels(bool enabled);
bool NativeKernelsEnabled();

/// While alive, records a copy of every program compiled on this process
/// (the build's --emit-kernels pass); one at a time.
class ProgramCollector {
 public:
  ProgramCollector();
  ~ProgramCollector();
  ProgramCollector(const ProgramCollector&) = delete;
  ProgramCollector& operator=(const ProgramCollector&) = delete;

  /// The C++ source of a kernel file for the recorded programs (one
  /// kernel per distinct program) and its registration.
  std::string KernelSource(const std::string& origin) const;
  int size() const { return static_cast<int>(programs_.size()); }

 private:
  friend class ExprProgram;
  std::vector<ExprProgram> programs_;
};

}  // namespace daedalus::internal
