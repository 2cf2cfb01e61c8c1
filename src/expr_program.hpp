// A straight-line program compiled from the outputs of an expression graph:
// the nodes those outputs need, in topological order, each one
// instruction that writes one slot of a scratch array. Run() is a single
// loop over the instructions, with no user-function calls, no dual
// numbers and no allocation; sin and cos of the same argument share one
// instruction.
#pragma once

#include <cstdint>
#include <vector>

#include "expr_graph.hpp"

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

 private:
  struct Instr {
    std::uint32_t op;  // Op, or kSinCosOp
    std::uint32_t dst, a, b;
  };
  int num_inputs_ = 0;
  std::size_t num_slots_ = 0;
  std::vector<std::pair<std::uint32_t, double>> constants_;  // slot, value
  std::vector<Instr> code_;
  std::vector<std::uint32_t> out_slots_;
  std::vector<char> out_zero_;
};

}  // namespace daedalus::internal
