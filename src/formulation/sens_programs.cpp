#include "formulation/sens_programs.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "formulation/dae_programs.hpp"
#include "model/invoke.hpp"

namespace daedalus::internal {

namespace {

int Number(const SymbolicModel& sm, const Sym& x) {
  return static_cast<int>(sm.graph.node(x.node()).value);
}

// Input numbers of t, q, v, p.
std::vector<int> StateNumbers(const SymbolicModel& sm) {
  return sm.StateInputs();
}

void Append(std::vector<int>* to, const SymbolicModel& sm, const VecX<Sym>& x) {
  for (Eigen::Index i = 0; i < x.size(); ++i) to->push_back(Number(sm, x[i]));
}

// The program `build` makes on the symbolic model, made once per model and
// `key`; null (the dual-number path stays) when the model has no compiled
// evaluator or has quaternions, or a function cannot be recorded, or the
// graph outgrows its limit.
template <class F>
std::unique_ptr<JacobianRun> TryBuild(const CompiledModel* cm,
                                      const Model& model,
                                      const std::string& key,
                                      F&& build) {
  if (cm == nullptr || !model.quaternions().empty()) return nullptr;
  auto p = cm->Cached<JacobianProgram>(
      "sens_programs:" + key,
      [&](SymbolicModel& sm) -> std::shared_ptr<const JacobianProgram> {
        auto j = std::make_shared<JacobianProgram>();
        try {
          build(sm, j.get());
        } catch (const NotTraceable&) {
          return nullptr;
        } catch (const std::length_error&) {
          return nullptr;
        }
        return j;
      });
  if (!p) return nullptr;
  return std::make_unique<JacobianRun>(std::move(p));
}

// A key's text for a double (exact).
std::string Exact(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%a", x);
  return b;
}

// Copies (t, q, v, p) into in[0 .. 1 + nq + nv + np).
double* FillState(double t,
                  const double* q,
                  const double* v,
                  const Eigen::VectorXd& p,
                  int nq,
                  int nv,
                  double* in) {
  in[0] = t;
  double* d = std::copy_n(q, nq, in + 1);
  d = std::copy_n(v, nv, d);
  return std::copy_n(p.data(), p.size(), d);
}

// The KKT residual R (the rows after q' = v of the DAE form at fixed a
// and lambda: AssembleDae, as the numeric path) and the program inputs
// (t, q, v, p, a, lambda).
void KktResidual(SymbolicModel& sm,
                 const DaeLayout& L,
                 std::vector<int>* f,
                 std::vector<int>* inputs) {
  const int n = L.size();
  const VecX<Sym> lambda = sm.NamedInputSyms("lambda", L.nc);
  VecX<Sym> Y = VecX<Sym>::Zero(n), YP = VecX<Sym>::Zero(n);
  Y.segment(L.iq(), L.nq) = sm.q;
  Y.segment(L.iv(), L.nv) = sm.v;
  Y.segment(L.il(), L.nc) = lambda;
  YP.segment(L.iv(), L.nv) = sm.vdot;
  VecX<Sym> F = VecX<Sym>::Zero(n);
  AssembleDae(L, sm, Y, YP, F);
  f->clear();
  for (int i = L.iv(); i < n; ++i) f->push_back(F[i].node());
  *inputs = StateNumbers(sm);
  Append(inputs, sm, sm.vdot);
  Append(inputs, sm, lambda);
}

// The KKT layout and the programs' cache key of a formulation.
DaeLayout KktLayout(const Model& model,
                    const ConstraintRows& rows,
                    const SimulationOptions& o,
                    Formulation form,
                    std::string* key) {
  SimulationOptions lo = o;
  lo.formulation = form == Formulation::kBaumgarte ? Formulation::kBaumgarte
                                                   : Formulation::kUnstabilized;
  *key = std::string("kkt:") + ToString(lo.formulation) + ":" +
         Exact(lo.baumgarte_alpha) + ":" + Exact(lo.baumgarte_beta);
  return DaeLayout(model, rows, lo);
}

}  // namespace

void JacobianProgram::Build(ExprGraph& g,
                            const std::vector<int>& inputs,
                            const std::vector<int>& f,
                            const std::vector<int>& wrt) {
  m = static_cast<int>(f.size());
  ncols = static_cast<int>(wrt.size());
  std::vector<int> nodes;
  rows.clear();
  cols.clear();
  std::vector<int> seed(static_cast<std::size_t>(g.num_inputs()), 0);
  for (int j = 0; j < ncols; ++j) {
    seed[static_cast<std::size_t>(wrt[j])] = 1;  // node 1: the constant 1
    const std::vector<int> col = g.Derivative(f, seed);
    seed[static_cast<std::size_t>(wrt[j])] = 0;
    for (int i = 0; i < m; ++i) {
      if (g.IsZero(col[i])) continue;
      rows.push_back(i);
      cols.push_back(j);
      nodes.push_back(col[i]);
    }
  }
  program = ExprProgram(g, inputs, nodes);
}

JacobianRun::JacobianRun(std::shared_ptr<const JacobianProgram> p)
    : p_(std::move(p)) {
  in_.assign(static_cast<std::size_t>(p_->program.num_inputs()), 0.0);
  p_->program.InitScratch(&scratch_);
  values_.assign(p_->rows.size(), 0.0);
}

bool JacobianRun::Run(Eigen::MatrixXd* out) {
  p_->program.Run(in_.data(), values_.data(), scratch_.data());
  out->setZero(p_->m, p_->ncols);
  double z = 0.0;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    (*out)(p_->rows[k], p_->cols[k]) = values_[k];
    z += values_[k] * 0.0;  // NaN when an entry is not finite
  }
  return z == 0.0;
}

// ------------------------------------------------------------------ KKT

std::unique_ptr<KktLinearization> KktLinearization::Make(
    const CompiledModel* cm,
    const Model& model,
    const ConstraintRows& rows,
    const SimulationOptions& o,
    Formulation form) {
  auto k = std::make_unique<KktLinearization>();
  std::string key;
  const DaeLayout L = KktLayout(model, rows, o, form, &key);
  k->jac_ =
      TryBuild(cm, model, key, [&](SymbolicModel& sm, JacobianProgram* jac) {
        std::vector<int> f, inputs;
        KktResidual(sm, L, &f, &inputs);
        const std::vector<int> wrt(inputs.begin() + 1, inputs.end());
        jac->Build(sm.graph, inputs, f, wrt);
      });
  if (!k->jac_) return nullptr;
  const int nqv = L.nq + L.nv, np = model.num_parameters();
  k->jac_y_ = TryBuild(
      cm, model, key + ":y", [&](SymbolicModel& sm, JacobianProgram* jac) {
        std::vector<int> f, inputs;
        KktResidual(sm, L, &f, &inputs);
        std::vector<int> wrt(inputs.begin() + 1, inputs.begin() + 1 + nqv);
        wrt.insert(wrt.end(), inputs.begin() + 1 + nqv + np, inputs.end());
        jac->Build(sm.graph, inputs, f, wrt);
      });
  if (!k->jac_y_) return nullptr;
  k->nq_ = L.nq;
  k->nv_ = L.nv;
  k->nc_ = L.nc;
  k->np_ = model.num_parameters();
  return k;
}

bool KktLinearization::Linearize(double t,
                                 const double* q,
                                 const double* v,
                                 const Eigen::VectorXd& p,
                                 const Eigen::VectorXd& a,
                                 const Eigen::VectorXd& lambda,
                                 bool with_p) {
  JacobianRun& jac = with_p ? *jac_ : *jac_y_;
  double* d = FillState(t, q, v, p, nq_, nv_, jac.in());
  d = std::copy_n(a.data(), nv_, d);
  std::copy_n(lambda.data(), nc_, d);
  if (!jac.Run(&all_)) return false;
  Z_ = all_.leftCols(nq_ + nv_ + (with_p ? np_ : 0));
  lu_valid_ = lut_valid_ = false;
  return true;
}

const Eigen::PartialPivLU<Eigen::MatrixXd>& KktLinearization::K() {
  if (!lu_valid_) {
    lu_.compute(all_.rightCols(nv_ + nc_));
    lu_valid_ = true;
  }
  return lu_;
}

Eigen::MatrixXd KktLinearization::SolveTransposed(const Eigen::MatrixXd& B) {
  if (!lut_valid_) {
    lut_.compute(all_.rightCols(nv_ + nc_).transpose());
    lut_valid_ = true;
  }
  return lut_.solve(B);
}

// ------------------------------------------------------------ KKT VJP

namespace {
std::atomic<bool> g_adjoint_shortcuts{true};
}  // namespace

void SetAdjointShortcuts(bool enabled) { g_adjoint_shortcuts = enabled; }
bool AdjointShortcutsEnabled() { return g_adjoint_shortcuts; }

std::unique_ptr<KktVjp> KktVjp::Make(const CompiledModel* cm,
                                     const Model& model,
                                     const ConstraintRows& rows,
                                     const SimulationOptions& o,
                                     Formulation form,
                                     const ScalarFn* running,
                                     bool params_only) {
  if (cm == nullptr || !model.quaternions().empty()) return nullptr;
  if (running != nullptr && !*running) running = nullptr;
  auto k = std::make_unique<KktVjp>();
  std::string key;
  const DaeLayout L = KktLayout(model, rows, o, form, &key);
  k->k_ = TryBuild(
      cm, model, key + ":K", [&](SymbolicModel& sm, JacobianProgram* jac) {
        std::vector<int> f, inputs;
        KktResidual(sm, L, &f, &inputs);
        const int nav = L.nv + L.nc;
        const std::vector<int> wrt(inputs.end() - nav, inputs.end());
        jac->Build(sm.graph, inputs, f, wrt);
      });
  if (!k->k_) return nullptr;
  const int nr = L.nv + L.nc;  // R's rows: KktResidual's f
  // The running functional's name in the key: its function object's
  // address (it lives in the model's data, as FunctionalGradient's).
  char id[40] = "";
  if (running)
    std::snprintf(id, sizeof id, ":g%p", static_cast<const void*>(running));
  k->vjp_ = cm->Cached<ExprProgram>(
      "sens_programs:" + key + ":vjp" + id + (params_only ? ":p" : ""),
      [&](SymbolicModel& sm) -> std::shared_ptr<const ExprProgram> {
        try {
          std::vector<int> f, inputs;
          KktResidual(sm, L, &f, &inputs);
          if (static_cast<int>(f.size()) != nr)
            throw std::logic_error("KktVjp: residual rows != nv + nc");
          const VecX<Sym> w = sm.NamedInputSyms("adjoint_w", nr);
          std::vector<int> weights;
          for (int i = 0; i < nr; ++i) weights.push_back(w[i].node());
          if (running) {
            // - g beside w' R: one backward sweep for both.
            const Sym g = Invoke(*running, Point<Sym>{sm.q, sm.v, sm.t, sm.p});
            f.push_back(g.node());
            weights.push_back(sm.graph.Constant(-1.0));
          }
          const int nqv = model.nq() + model.nv();
          const int nqvp = nqv + model.num_parameters();
          const std::vector<int> wrt(
              inputs.begin() + 1 + (params_only ? nqv : 0),
              inputs.begin() + 1 + nqvp);
          const std::vector<int> out = sm.graph.Gradient(f, weights, wrt);
          Append(&inputs, sm, w);
          return std::make_shared<const ExprProgram>(sm.graph, inputs, out);
        } catch (const NotTraceable&) {
          return nullptr;
        } catch (const std::length_error&) {
          return nullptr;
        }
      });
  if (!k->vjp_) return nullptr;
  k->with_running_ = running != nullptr;
  k->params_only_ = params_only;
  k->nq_ = L.nq;
  k->nv_ = L.nv;
  k->nc_ = L.nc;
  k->np_ = model.num_parameters();
  k->in_.assign(static_cast<std::size_t>(k->vjp_->num_inputs()), 0.0);
  k->vjp_->InitScratch(&k->scratch_);
  return k;
}

bool KktVjp::Prepare(double t,
                     const double* q,
                     const double* v,
                     const Eigen::VectorXd& p,
                     const Eigen::VectorXd& a,
                     const Eigen::VectorXd& lambda) {
  double* d = FillState(t, q, v, p, nq_, nv_, k_->in());
  d = std::copy_n(a.data(), nv_, d);
  std::copy_n(lambda.data(), nc_, d);
  // The product's inputs but w: the same (t, q, v, p, a, lambda).
  std::copy_n(k_->in(), in_.size() - static_cast<std::size_t>(nv_ + nc_),
              in_.data());
  lut_valid_ = false;
  return k_->Run(&K_);
}

Eigen::VectorXd KktVjp::SolveTransposed(const Eigen::VectorXd& b) {
  if (!lut_valid_) {
    lut_.compute(K_.transpose());
    lut_valid_ = true;
  }
  return lut_.solve(b);
}

bool KktVjp::Product(const Eigen::VectorXd& w, Eigen::VectorXd* out) {
  std::copy_n(w.data(), nv_ + nc_,
              in_.data() + in_.size() - static_cast<std::size_t>(nv_ + nc_));
  out->resize((params_only_ ? 0 : nq_ + nv_) + np_);
  vjp_->Run(in_.data(), out->data(), scratch_.data());
  return out->allFinite();
}

// ----------------------------------------------------------- integrands

std::unique_ptr<BaumgarteIntegrandJacobian> BaumgarteIntegrandJacobian::Make(
    const CompiledModel* cm, const Model& model) {
  auto b = std::make_unique<BaumgarteIntegrandJacobian>();
  const QuadLayout Q(model);
  b->jac_ =
      TryBuild(cm, model, "baumgarte_integrands",
               [&](SymbolicModel& sm, JacobianProgram* jac) {
                 const int nc = model.nc();
                 const VecX<Sym> ideal = sm.NamedInputSyms("lambda_ideal", nc);
                 const VecX<Sym> applied = sm.NamedInputSyms("lambda", nc);
                 const VecX<Sym> jv = ConstraintRates(sm);
                 Sym stab = 0.0;
                 for (int i = 0; i < nc; ++i)
                   stab += (applied[i] - ideal[i]) * jv[i];
                 VecX<Sym> out = VecX<Sym>::Zero(Q.size());
                 QuadratureIntegrandsAtRates(Q, sm, jv, ideal, stab, out);
                 std::vector<int> f;
                 for (Eigen::Index i = 0; i < out.size(); ++i)
                   f.push_back(out[i].node());
                 std::vector<int> inputs = StateNumbers(sm);
                 Append(&inputs, sm, ideal);
                 Append(&inputs, sm, applied);
                 const std::vector<int> wrt(inputs.begin() + 1, inputs.end());
                 jac->Build(sm.graph, inputs, f, wrt);
               });
  if (!b->jac_) return nullptr;
  b->nq_ = model.nq();
  b->nv_ = model.nv();
  b->nc_ = model.nc();
  b->np_ = model.num_parameters();
  return b;
}

bool BaumgarteIntegrandJacobian::Run(double t,
                                     const double* q,
                                     const double* v,
                                     const Eigen::VectorXd& p,
                                     const Eigen::VectorXd& lambda_ideal,
                                     const double* lambda_applied,
                                     Eigen::MatrixXd* out) {
  double* d = FillState(t, q, v, p, nq_, nv_, jac_->in());
  d = std::copy_n(lambda_ideal.data(), nc_, d);
  std::copy_n(lambda_applied, nc_, d);
  return jac_->Run(out);
}

// ----------------------------------------------------------- functional

std::unique_ptr<FunctionalGradient> FunctionalGradient::Make(
    const CompiledModel* cm, const Model& model, const ScalarFn& g) {
  if (!g) return nullptr;
  auto r = std::make_unique<FunctionalGradient>();
  // The function object's address names it: it lives in the model's data,
  // as the compiled model does.
  char id[32];
  std::snprintf(id, sizeof id, "%p", static_cast<const void*>(&g));
  r->jac_ = TryBuild(
      cm, model, std::string("functional_gradient:") + id,
      [&](SymbolicModel& sm, JacobianProgram* jac) {
        const Sym value = Invoke(g, Point<Sym>{sm.q, sm.v, sm.t, sm.p});
        const std::vector<int> inputs = StateNumbers(sm);
        const std::vector<int> wrt(inputs.begin() + 1, inputs.end());
        jac->Build(sm.graph, inputs, {value.node()}, wrt);
      });
  if (!r->jac_) return nullptr;
  r->nq_ = model.nq();
  r->nv_ = model.nv();
  r->np_ = model.num_parameters();
  return r;
}

bool FunctionalGradient::Run(double t,
                             const double* q,
                             const double* v,
                             const Eigen::VectorXd& p,
                             Eigen::VectorXd* gy,
                             Eigen::VectorXd* gp) {
  FillState(t, q, v, p, nq_, nv_, jac_->in());
  if (!jac_->Run(&row_)) return false;
  *gy = row_.row(0).head(nq_ + nv_).transpose();
  *gp = row_.row(0).tail(np_).transpose();
  return true;
}

// ------------------------------------------------------------------ dF/dp

std::unique_ptr<DaeParameterJacobian> DaeParameterJacobian::Make(
    const CompiledModel* cm, const Model& model, const DaeLayout& L) {
  auto r = std::make_unique<DaeParameterJacobian>();
  const std::string key = std::string("dae_fp:") + ToString(L.form) + ":" +
                          Exact(L.alpha) + ":" + Exact(L.beta);
  r->jac_ =
      TryBuild(cm, model, key, [&](SymbolicModel& sm, JacobianProgram* jac) {
        // The unknowns named as DaePrograms names them.
        const int n = L.size();
        VecX<Sym> Y, YP;
        DaeUnknownSyms(sm, L, &Y, &YP);
        VecX<Sym> F = VecX<Sym>::Zero(n);
        AssembleDae(L, sm, Y, YP, F);
        std::vector<int> f(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) f[i] = F[i].node();
        std::vector<int> inputs = {0};
        Append(&inputs, sm, Y);
        Append(&inputs, sm, YP);
        std::vector<int> wrt;
        for (int k = 0; k < model.num_parameters(); ++k)
          wrt.push_back(sm.p_input(k));
        inputs.insert(inputs.end(), wrt.begin(), wrt.end());
        jac->Build(sm.graph, inputs, f, wrt);
      });
  if (!r->jac_) return nullptr;
  r->n_ = L.size();
  r->np_ = model.num_parameters();
  return r;
}

bool DaeParameterJacobian::Run(double t,
                               const double* y,
                               const double* yp,
                               const Eigen::VectorXd& p,
                               Eigen::MatrixXd* Fp) {
  double* in = jac_->in();
  in[0] = t;
  double* d = std::copy_n(y, n_, in + 1);
  d = std::copy_n(yp, n_, d);
  std::copy_n(p.data(), np_, d);
  return jac_->Run(Fp);
}

}  // namespace daedalus::internal
