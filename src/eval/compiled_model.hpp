// Compiled evaluation of a model (docs/conventions.md, "Compiled
// evaluation"). The model's user functions are recorded once with the
// symbolic scalar Sym (sym.hpp) into one expression graph; the stage
// outputs of dynamics.hpp (Phi, J, Phi_t, J v + Phi_t, b, M, h, momenta,
// energies, forces) are built from it by exact symbolic differentiation;
// each evaluation request then runs as one straight-line ExprProgram.
// The integrators build further programs on the same graph (the IDAS
// residual, its Jacobian and the quadrature integrands).
//
// A model is compiled on first use, once, and shared by every workspace
// and thread. When a user function cannot be recorded (it branches on a
// value, sym.hpp) or the graph grows past ExprGraph::kMaxNodes, the model
// keeps the dual-number path and `why_not` says why.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "eval/expr_graph.hpp"
#include "eval/expr_program.hpp"

namespace daedalus::internal {

/// The model's functions and stage outputs as nodes of one graph. Its
/// members mirror BasicWorkspace's, so that templated formulation code
/// (IdasRun::Assemble, QuadratureIntegrands) builds the symbolic residual
/// from it exactly as it builds the numeric one from a workspace.
struct SymbolicModel {
  using Scalar = Sym;
  explicit SymbolicModel(const Model& m);

  const Model& model() const { return model_; }

  ExprGraph graph;
  // Inputs: input number 0 is t, then q (nq), v (nv), p (np); later ones
  // are made by NamedInputs.
  Sym t;
  VecX<Sym> q, v, p;
  VecX<Sym> vdot;  // nv: the "vdot" inputs of Mvdot_h

  // ---- stage outputs (dynamics.hpp)
  VecX<Sym> phi, phi_t, vel_residual, bias;
  MatX<Sym> J;
  MatX<Sym> M, B, D;
  VecX<Sym> h, inertial, Bu, u, Dv, Qr, momentum, Mvdot_h, Lq;
  Sym lagrangian, energy, kinetic, potential, L_t;

  /// Input numbers of n inputs under `name` (made on first request, the
  /// same ones afterwards), and their nodes.
  std::vector<int> NamedInputs(const std::string& name, int n);
  VecX<Sym> NamedInputSyms(const std::string& name, int n);
  /// Input numbers of t, q, v and p in that order.
  std::vector<int> StateInputs() const;

  /// Directional derivatives of `f` along input seeds (input number,
  /// derivative node).
  std::vector<Sym> Along(const std::vector<Sym>& f,
                         const std::vector<std::pair<int, Sym>>& seeds);
  /// E_q . dq (the power of a position correction, dynamics.hpp's
  /// EnergyDerivativeAlongQ).
  Sym EnergyAlongQ(const VecX<Sym>& dq);

  int q_input(int i) const { return 1 + i; }
  int v_input(int i) const { return 1 + model_.nq() + i; }
  int p_input(int i) const { return 1 + model_.nq() + model_.nv() + i; }

 private:
  Model model_;  // unowned: the model's data owns this (through its cache)
  std::vector<std::pair<std::string, std::vector<int>>> named_;
};

/// A stage program: which workspace fields it writes, in order.
enum class StageField {
  kPhi,
  kJ,
  kPhiT,
  kVelResidual,
  kBias,
  kLagrangian,
  kLt,
  kKinetic,
  kPotential,
  kB,
  kU,
  kBu,
  kD,
  kDv,
  kQr,
  kM,
  kInertial,
  kH,
  kMomentum,
  kEnergy,
  kMvdotH,
};

struct StageProgram {
  ExprProgram program;
  std::vector<StageField> fields;
  bool position_only = false;  // Phi, J, Phi_t only (EvaluatePosition)
  bool needs_vdot = false;     // inputs t, q, v, p, then vdot (nv)
  EvalRequest::Dynamics dynamics = EvalRequest::Dynamics::kFull;
  bool bias = true;
};

/// Stage program variants: 3 dynamics requests x with/without the bias,
/// and position only.
inline constexpr int kStageVariants = 7;
inline constexpr int kPositionVariant = 6;
inline int StageVariant(const EvalRequest& req) {
  return static_cast<int>(req.dynamics) * 2 + (req.bias ? 1 : 0);
}

class CompiledModel {
 public:
  /// Records and prepares `model`; nullptr (and `why_not`) when it cannot.
  static std::shared_ptr<CompiledModel> Make(const Model& model,
                                             std::string* why_not);

  /// The stage program of a variant, compiled on first request.
  const StageProgram& Stage(int variant) const;

  /// Runs `f(SymbolicModel&)` with the graph locked and recording: the
  /// integrators build their own programs this way.
  template <class F>
  auto WithSymbolic(F&& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    TraceScope scope(&sym_->graph);
    return f(*sym_);
  }

  int graph_size() const;

  /// An object built on the graph once per model and `key` and shared by
  /// every run after (the sensitivity paths' Jacobian programs,
  /// formulation/sens_programs.hpp): `make(SymbolicModel&)` runs with the
  /// graph locked and recording on the first request and returns a
  /// std::shared_ptr<const T> (null when it cannot be built: also kept).
  template <class T, class F>
  std::shared_ptr<const T> Cached(const std::string& key, F&& make) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = cache_.find(key);
    if (it != cache_.end())
      return std::static_pointer_cast<const T>(it->second);
    TraceScope scope(&sym_->graph);
    std::shared_ptr<const T> r = make(*sym_);
    cache_.emplace(key, r);
    return r;
  }

 private:
  mutable std::map<std::string, std::shared_ptr<const void>> cache_;
  mutable std::mutex mu_;
  std::unique_ptr<SymbolicModel> sym_;
  mutable std::array<std::unique_ptr<StageProgram>, kStageVariants> stages_;
};

/// Larger models keep the dual-number path: the mass matrix alone is nq^2
/// expressions (maximal-coordinate chains take the sparse path).
inline constexpr int kMaxCompiledCoordinates = 60;

/// The compiled evaluator of `model`, made on first use; nullptr when the
/// model cannot be compiled (then `why_not`, if given, says why).
const CompiledModel* GetCompiled(const Model& model,
                                 std::string* why_not = nullptr);

/// Fills the workspace as EvaluateAll (or EvaluatePosition for
/// kPositionVariant) would, with the compiled program. Returns false,
/// leaving the stage at kNone, when an output is not finite: the caller
/// then evaluates by the dual-number path, whose checks name the function
/// at fault.
bool EvaluateCompiled(const CompiledModel& cm,
                      int variant,
                      const EvalRequest& req,
                      Workspace* ws);

}  // namespace daedalus::internal
