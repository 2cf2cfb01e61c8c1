// IDAS adapter: GGL index-2, direct index-3, and index-1 (unstabilized or
// Baumgarte) DAE forms of a constrained model (docs/formulations.md).
#include "integrate/idas_integrate.hpp"

#include <idas/idas.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>

#include "daedalus/kkt.hpp"
#include "daedalus/simulate.hpp"
#include "eval/compiled_model.hpp"
#include "integrate/integrator_common.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/sens_common.hpp"

namespace daedalus::internal {

namespace {

// State the IDAS callbacks share. Callbacks are noexcept trampolines.
struct IdasRun : CallbackGuard {
  IdasRun(const Model& m, const SimulationOptions& o)
      : model(m), ws(m), kkt(m, o.kkt), opt(o), layout(m) {}
  const Model& model;
  Workspace ws;
  KktSolver kkt;
  SimulationOptions opt;
  QuadLayout layout;
  std::vector<int> hrows;  // holonomic rows (the G of GGL)
  std::vector<bool> holonomic;
  int nq = 0, nv = 0, nc = 0, nh = 0;
  const RootSet* roots = nullptr;
  KktResult reported;  // multipliers reported at outputs and roots

  // Offsets into y.
  int iq() const { return 0; }
  int iv() const { return nq; }
  int il() const { return nq + nv; }
  int im() const { return nq + nv + nc; }
  int size() const {
    return nq + nv + nc + (opt.formulation == Formulation::kGgl ? nh : 0);
  }

  // Difference-quotient sensitivities: the parameter values SUNDIALS
  // perturbs (nullptr otherwise).
  const Eigen::VectorXd* dq_params = nullptr;

  void Evaluate(double t, const double* y, const EvalRequest& req = {}) {
    if (dq_params) ws.SetParameters(*dq_params);
    ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(y + iq(), nq),
                Eigen::Map<const Eigen::VectorXd>(y + iv(), nv));
    EvaluateAll(&ws, req);
  }

  // Only the index-1 residuals read the acceleration bias.
  bool NeedsBias() const {
    return opt.formulation != Formulation::kGgl &&
           opt.formulation != Formulation::kIndex3;
  }

  // Multipliers inside a solver vector (a view, no copy).
  Eigen::Map<const Eigen::VectorXd> Lambda(const double* y) const {
    return Eigen::Map<const Eigen::VectorXd>(y + il(), nc);
  }

  // G' mu for the GGL correction (zero for other forms).
  template <class W, class VY>
  VecX<typename W::Scalar> GtMu(const W& w, const VY& y) const {
    using S = typename W::Scalar;
    VecX<S> r = VecX<S>::Zero(nv);
    if (opt.formulation != Formulation::kGgl) return r;
    for (int k = 0; k < nh; ++k)
      r += w.J.row(hrows[k]).transpose() * y[im() + k];
    return r;
  }
  Eigen::VectorXd GtMu(const double* y) const {
    return GtMu(ws, Eigen::Map<const Eigen::VectorXd>(y, size()));
  }

  // The DAE residual F(t, y, yp) from a workspace evaluated at (t, q, v).
  // Templated on the workspace: the tangent workspace gives its exact
  // linearization (Jacobian columns, sensitivity residuals), the symbolic
  // model its expression (the compiled programs below).
  template <class W, class VY, class VF>
  void Assemble(const W& w, const VY& y, const VY& yp, VF& F) const {
    using S = typename W::Scalar;
    const auto lambda = y.segment(il(), nc);
    const auto qp = yp.segment(iq(), nq);
    const auto vp = yp.segment(iv(), nv);
    // Written in place, without temporaries (this runs once per residual).
    auto Fq = F.segment(iq(), nq);
    Fq = qp - w.v;
    if (opt.formulation == Formulation::kGgl)
      for (int k = 0; k < nh; ++k)
        Fq += w.J.row(hrows[k]).transpose() * y[im() + k];
    auto Fv = F.segment(iv(), nv);
    if constexpr (!std::is_same_v<S, D1>) {
      // The value residual is evaluated with EvalRequest::kResidual, which
      // gives M vdot + h in one sweep without forming M; the symbolic
      // model's M vdot + h reads the inputs that BuildPrograms makes vp.
      Fv = w.Mvdot_h - w.Bu;
    } else {
      Fv = w.h - w.Bu;
      Fv.noalias() += w.M * vp;
    }
    Fv.noalias() -= w.J.transpose() * lambda;
    auto Fl = F.segment(il(), nc);
    switch (opt.formulation) {
      case Formulation::kGgl:
        Fl = w.vel_residual;
        for (int k = 0; k < nh; ++k) F[im() + k] = w.phi[hrows[k]];
        break;
      case Formulation::kIndex3:
        for (int i = 0; i < nc; ++i)
          Fl[i] = holonomic[i] ? w.phi[i] : w.vel_residual[i];
        break;
      default: {
        // Index 1: J vdot + b (+ Baumgarte terms) = 0.
        Fl = w.J * vp + w.bias;
        if (opt.formulation == Formulation::kBaumgarte) {
          const double a = opt.baumgarte_alpha, b = opt.baumgarte_beta;
          for (int i = 0; i < nc; ++i)
            Fl[i] += holonomic[i]
                         ? S(2.0 * a) * w.vel_residual[i] + S(b * b) * w.phi[i]
                         : S(a) * w.vel_residual[i];
        }
      }
    }
  }

  void Residual(double t, const double* y, const double* yp, double* res) {
    if (prog && prog->Residual(t, y, yp, CurrentParameters(), res)) return;
    EvalRequest req;
    req.bias = NeedsBias();
    req.dynamics = EvalRequest::Dynamics::kResidual;
    req.vdot = yp + iv();
    Evaluate(t, y, req);
    Eigen::Map<Eigen::VectorXd> F(res, size());
    Assemble(ws, Eigen::Map<const Eigen::VectorXd>(y, size()),
             Eigen::Map<const Eigen::VectorXd>(yp, size()), F);
  }

  // ---- exact linearization

  TangentWorkspace tws{model};
  VecX<D1> Y1, YP1, F1;
  Eigen::VectorXd zero_dp;

  // Seeds the tangent workspace at (t, q, v) with tangents (dq, dv) from dy
  // and parameter direction dp (may be empty), and evaluates all stages.
  void SeedAndEvaluate(double t,
                       const double* y,
                       const double* dy,
                       const Eigen::VectorXd& dp) {
    ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(y + iq(), nq),
                Eigen::Map<const Eigen::VectorXd>(y + iv(), nv));
    SeedTangent(ws, Eigen::Map<const Eigen::VectorXd>(dy + iq(), nq),
                Eigen::Map<const Eigen::VectorXd>(dy + iv(), nv), dp, &tws);
    EvalRequest req;
    req.bias = NeedsBias();
    EvaluateAll(&tws, req);
  }

  // Tangent of F along (dy, dyp) with the tangent workspace already seeded
  // consistently with dy.
  void AssembleTangent(const double* y,
                       const double* yp,
                       const double* dy,
                       const double* dyp,
                       double* out) {
    const int n = size();
    Y1.resize(n), YP1.resize(n), F1.resize(n);
    for (int j = 0; j < n; ++j) {
      Y1[j] = D1(y[j], dy[j]);
      YP1[j] = D1(yp[j], dyp[j]);
    }
    Assemble(tws, Y1, YP1, F1);
    for (int j = 0; j < n; ++j) out[j] = F1[j].d;
  }

  // Exact dF/dy + cj dF/dyp, column by column (dense, column-major). The
  // multiplier columns enter F linearly: one zero-tangent evaluation of the
  // workspace serves all of them.
  Eigen::MatrixXd jac;
  void Jacobian(double t, double cj, const double* y, const double* yp) {
    const int n = size(), nd = nq + nv;
    jac.resize(n, n);
    Eigen::VectorXd dy = Eigen::VectorXd::Zero(n), dyp = dy;
    for (int j = 0; j < n; ++j) {
      // Columns of q and v move the workspace; at j == nd the seed is zero
      // (dy is reset after each column) and serves the multiplier columns.
      if (j < nd) dy[j] = 1.0;
      if (j <= nd) SeedAndEvaluate(t, y, dy.data(), zero_dp);
      dy[j] = 1.0;
      dyp[j] = cj;
      AssembleTangent(y, yp, dy.data(), dyp.data(), jac.col(j).data());
      dy[j] = 0.0;
      dyp[j] = 0.0;
    }
  }

  // Structurally nonzero rows of each Jacobian column (KLU pattern).
  std::vector<std::vector<int>> pattern;
  void BuildPattern() {
    const int n = size(), nd = nq + nv;
    pattern.assign(n, {});
    if (prog) {
      // The compiled Jacobian's structural nonzeros (exact zeros elsewhere
      // at every state).
      for (const auto& [i, j] : prog->jac_entries) pattern[j].push_back(i);
      return;
    }
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        // The multiplier rows and columns couple to the multipliers only
        // through q and v: their mutual block is structurally zero.
        if (i >= nd && j >= nd) continue;
        // lambda and mu enter only the q and v rows (G' mu, J' lambda).
        pattern[j].push_back(i);
      }
    }
  }

  // ---- compiled programs (compiled_model.hpp): the residual, its exact
  // Jacobian dF/dy + cj dF/dyp and the quadrature integrands, each one
  // straight-line program over the inputs [t | y | yp | p | cj].
  struct Programs {
    ExprProgram res, jac, quad;
    bool has_quad = false;
    // Forward sensitivities: the tangents of F and of the integrands along
    // (dy, dyp, dp), over the inputs [t | y | yp | p | cj | dy | dyp | dp].
    ExprProgram sens, qsens;
    bool has_sens = false, has_qsens = false;
    int n = 0, np = 0;
    // (row, column) of each Jacobian output: its structural nonzeros,
    // column by column.
    std::vector<std::pair<int, int>> jac_entries;
    std::vector<double> in, s_res, s_jac, s_quad, jac_values;
    std::vector<double> sin, s_sens, s_qsens;

    // Writes [t | y | yp | p | cj] to `to` (`in` unless given).
    void Fill(double t,
              const double* y,
              const double* yp,
              const Eigen::VectorXd& p,
              double cj,
              double* to = nullptr) {
      if (!to) to = in.data();
      to[0] = t;
      std::copy_n(y, n, to + 1);
      std::copy_n(yp, n, to + 1 + n);
      std::copy_n(p.data(), np, to + 1 + 2 * n);
      to[1 + 2 * n + np] = cj;
    }
    static bool Finite(const double* x, int m) {
      double z = 0.0;
      for (int i = 0; i < m; ++i) z += x[i] * 0.0;
      return z == 0.0;
    }
    // Each returns false (the caller then takes the dual-number path, which
    // names the function at fault) when an output is not finite.
    bool Residual(double t,
                  const double* y,
                  const double* yp,
                  const Eigen::VectorXd& p,
                  double* res) {
      Fill(t, y, yp, p, 0.0);
      this->res.Run(in.data(), res, s_res.data());
      return Finite(res, n);
    }
    bool Jacobian(double t,
                  double cj,
                  const double* y,
                  const double* yp,
                  const Eigen::VectorXd& p) {
      Fill(t, y, yp, p, cj);
      jac.Run(in.data(), jac_values.data(), s_jac.data());
      return Finite(jac_values.data(), jac.num_outputs());
    }
    bool Quadratures(double t,
                     const double* y,
                     const Eigen::VectorXd& p,
                     double* out) {
      Fill(t, y, y, p, 0.0);
      quad.Run(in.data(), out, s_quad.data());
      return Finite(out, quad.num_outputs());
    }
    // The inputs of the sensitivity programs; dyp may be null (zero).
    void FillTangent(double t,
                     const double* y,
                     const double* yp,
                     const Eigen::VectorXd& p,
                     const double* dy,
                     const double* dyp,
                     const Eigen::VectorXd& dp) {
      Fill(t, y, yp, p, 0.0, sin.data());
      double* d = sin.data() + in.size();
      d = std::copy_n(dy, n, d);
      d = dyp ? std::copy_n(dyp, n, d) : std::fill_n(d, n, 0.0);
      std::copy_n(dp.data(), np, d);
    }
    bool SensResidual(double t,
                      const double* y,
                      const double* yp,
                      const Eigen::VectorXd& p,
                      const double* dy,
                      const double* dyp,
                      const Eigen::VectorXd& dp,
                      double* out) {
      FillTangent(t, y, yp, p, dy, dyp, dp);
      sens.Run(sin.data(), out, s_sens.data());
      return Finite(out, n);
    }
    bool QuadSens(double t,
                  const double* y,
                  const Eigen::VectorXd& p,
                  const double* dy,
                  const Eigen::VectorXd& dp,
                  double* out) {
      FillTangent(t, y, y, p, dy, nullptr, dp);
      qsens.Run(sin.data(), out, s_qsens.data());
      return Finite(out, qsens.num_outputs());
    }
  };
  std::unique_ptr<Programs> prog;

  const Eigen::VectorXd& CurrentParameters() const {
    return dq_params ? *dq_params : ws.p;
  }

  // Builds the programs from the symbolic model: the same Assemble and
  // QuadratureIntegrands as the numeric path, on symbols.
  void BuildPrograms(const CompiledModel& cm) {
    auto p = std::make_unique<Programs>();
    cm.WithSymbolic([&](SymbolicModel& sm) {
      const int n = size(), np = model.num_parameters();
      VecX<Sym> Y(n), YP(n);
      Y.segment(iq(), nq) = sm.q;
      Y.segment(iv(), nv) = sm.v;
      Y.segment(il(), nc) = sm.NamedInputSyms("lambda", nc);
      if (opt.formulation == Formulation::kGgl)
        Y.segment(im(), nh) = sm.NamedInputSyms("mu", nh);
      YP.segment(iq(), nq) = sm.NamedInputSyms("qdot", nq);
      YP.segment(iv(), nv) = sm.vdot;  // what sm.Mvdot_h is built on
      YP.segment(il(), nc) = sm.NamedInputSyms("lambda'", nc);
      if (opt.formulation == Formulation::kGgl)
        YP.segment(im(), nh) = sm.NamedInputSyms("mu'", nh);
      const Sym cj = sm.NamedInputSyms("cj", 1)[0];
      auto number = [&](const Sym& x) {
        return static_cast<int>(sm.graph.node(x.node()).value);
      };
      std::vector<int> inputs = {0};
      for (int j = 0; j < n; ++j) inputs.push_back(number(Y[j]));
      for (int j = 0; j < n; ++j) inputs.push_back(number(YP[j]));
      for (int k = 0; k < np; ++k) inputs.push_back(sm.p_input(k));
      inputs.push_back(number(cj));

      VecX<Sym> F = VecX<Sym>::Zero(n);
      Assemble(sm, Y, YP, F);
      std::vector<int> f(n);
      for (int i = 0; i < n; ++i) f[i] = F[i].node();
      p->res = ExprProgram(sm.graph, inputs, f);

      // Column j: the derivative of F along y_j = 1, yp_j = cj.
      std::vector<int> entries;
      for (int j = 0; j < n; ++j) {
        std::vector<int> seed(static_cast<std::size_t>(sm.graph.num_inputs()),
                              0);
        seed[number(Y[j])] = 1;
        seed[number(YP[j])] = cj.node();
        const std::vector<int> col = sm.graph.Derivative(f, seed);
        for (int i = 0; i < n; ++i) {
          if (sm.graph.IsZero(col[i])) continue;
          p->jac_entries.emplace_back(i, j);
          entries.push_back(col[i]);
        }
      }
      p->jac = ExprProgram(sm.graph, inputs, entries);

      // Baumgarte's quadratures need the ideal multipliers (a KKT solve).
      std::vector<int> quad_nodes;
      if (opt.formulation != Formulation::kBaumgarte || nc == 0) {
        Sym stab = 0.0;
        if (opt.formulation == Formulation::kGgl && nh > 0)
          stab = sm.EnergyAlongQ(-GtMu(sm, Y));
        VecX<Sym> out = VecX<Sym>::Zero(layout.size());
        QuadratureIntegrands(layout, sm, Y.segment(il(), nc), stab, out);
        for (Eigen::Index k = 0; k < out.size(); ++k)
          quad_nodes.push_back(out[k].node());
        p->quad = ExprProgram(sm.graph, inputs, quad_nodes);
        p->has_quad = true;
      }
      const SensitivityOptions& so = opt.sensitivity;
      if (so.method == SensMethod::kForward) {
        // One derivative pass along y_j -> dy_j, yp_j -> dyp_j,
        // p_k -> dp_k: the sensitivity residual (unless SUNDIALS's
        // difference quotients replace it) and the integrands' tangent
        // (always exact: SimulateIdas), which does not read yp.
        // The symbolic model is shared by the formulations, whose state
        // sizes differ: the tangent inputs are named by their size.
        const std::string size = std::to_string(n);
        const VecX<Sym> dY = sm.NamedInputSyms("dy" + size, n);
        const VecX<Sym> dYP = sm.NamedInputSyms("dyp" + size, n);
        const VecX<Sym> dP = sm.NamedInputSyms("dp", np);
        std::vector<int> seed(static_cast<std::size_t>(sm.graph.num_inputs()),
                              0);
        std::vector<int> sens_inputs = inputs;
        for (int j = 0; j < n; ++j) {
          seed[number(Y[j])] = dY[j].node();
          seed[number(YP[j])] = dYP[j].node();
        }
        for (int k = 0; k < np; ++k) seed[sm.p_input(k)] = dP[k].node();
        for (const VecX<Sym>* d : {&dY, &dYP, &dP})
          for (Eigen::Index j = 0; j < d->size(); ++j)
            sens_inputs.push_back(number((*d)[j]));
        if (!so.difference_quotient) {
          p->sens =
              ExprProgram(sm.graph, sens_inputs, sm.graph.Derivative(f, seed));
          p->has_sens = true;
        }
        if (p->has_quad) {
          p->qsens = ExprProgram(sm.graph, sens_inputs,
                                 sm.graph.Derivative(quad_nodes, seed));
          p->has_qsens = true;
        }
      }
      p->n = n;
      p->np = np;
    });
    p->in.assign(static_cast<std::size_t>(p->res.num_inputs()), 0.0);
    p->res.InitScratch(&p->s_res);
    p->jac.InitScratch(&p->s_jac);
    if (p->has_quad) p->quad.InitScratch(&p->s_quad);
    if (p->has_sens) p->sens.InitScratch(&p->s_sens);
    if (p->has_qsens) p->qsens.InitScratch(&p->s_qsens);
    // [in | dy | dyp | dp], the inputs of both tangent programs.
    if (p->has_sens || p->has_qsens)
      p->sin.assign(p->in.size() + 2 * static_cast<std::size_t>(p->n) +
                        static_cast<std::size_t>(p->np),
                    0.0);
    p->jac_values.assign(p->jac_entries.size(), 0.0);
    prog = std::move(p);
  }

  // Quadrature integrands (QuadLayout) at (t, y).
  void Quadratures(double t, const double* yv, double* rq) {
    if (prog && prog->has_quad &&
        prog->Quadratures(t, yv, CurrentParameters(), rq))
      return;
    Eigen::Map<Eigen::VectorXd> out(rq, layout.size());
    // The power terms need forces, J, Phi_t and L_t; Baumgarte's ideal
    // multipliers need the full dynamics.
    EvalRequest req;
    if (opt.formulation != Formulation::kBaumgarte || nc == 0) {
      req.bias = false;
      req.dynamics = EvalRequest::Dynamics::kForces;
    }
    Evaluate(t, yv, req);
    double stab = 0.0;
    if (opt.formulation == Formulation::kGgl && nh > 0) {
      // Power of the position correction qdot = v - G' mu.
      const Eigen::VectorXd dq = -GtMu(yv);
      stab = EnergyDerivativeAlongQ(&ws, dq);
    }
    if (opt.formulation == Formulation::kBaumgarte && nc > 0) {
      // Baumgarte's share of lambda is stabilization, not constraint work.
      IdealMultipliers(ws, &kkt, &reported);
      stab = StabilizationPower(ws, Lambda(yv), reported.lambda);
      QuadratureIntegrands(layout, ws, reported.lambda, stab, out);
      return;
    }
    QuadratureIntegrands(layout, ws, Lambda(yv), stab, out);
  }

  // The Jacobian dF/dy + cj dF/dyp into a dense column-major n x n array.
  void DenseJacobian(
      double t, double cj, const double* y, const double* yp, double* a) {
    const int n = size();
    if (prog && prog->Jacobian(t, cj, y, yp, CurrentParameters())) {
      std::fill_n(a, static_cast<std::size_t>(n) * n, 0.0);
      for (std::size_t k = 0; k < prog->jac_entries.size(); ++k) {
        const auto [i, j] = prog->jac_entries[k];
        a[static_cast<std::size_t>(j) * n + i] = prog->jac_values[k];
      }
      return;
    }
    Jacobian(t, cj, y, yp);
    for (int j = 0; j < n; ++j)
      std::copy_n(jac.col(j).data(), n, a + static_cast<std::size_t>(j) * n);
  }

  // The tangent of F along (dy, dyp) and the parameter direction dp (the
  // sensitivity residual of one parameter).
  void SensResidual(double t,
                    const double* y,
                    const double* yp,
                    const double* dy,
                    const double* dyp,
                    const Eigen::VectorXd& dp,
                    double* out) {
    if (prog && prog->has_sens &&
        prog->SensResidual(t, y, yp, CurrentParameters(), dy, dyp, dp, out))
      return;
    SeedAndEvaluate(t, y, dy, dp);
    AssembleTangent(y, yp, dy, dyp, out);
  }

  // The tangent of the quadrature integrands along (dy, dp).
  void QuadSens(double t,
                const double* y,
                const double* dy,
                const Eigen::VectorXd& dp,
                double* out) {
    if (prog && prog->has_qsens &&
        prog->QuadSens(t, y, CurrentParameters(), dy, dp, out))
      return;
    const int n = size();
    VecX<D1> Y(n), q(layout.size());
    SeedAndEvaluate(t, y, dy, dp);
    for (int j = 0; j < n; ++j) Y[j] = D1(y[j], dy[j]);
    D1 stab(0.0);
    if (opt.formulation == Formulation::kGgl && nh > 0) {
      const VecX<D1> dq = -GtMu(tws, Y);
      stab = EnergyDerivativeAlongQ(&tws, dq);
    }
    QuadratureIntegrands(layout, tws, Y.segment(il(), nc), stab, q);
    for (Eigen::Index k = 0; k < q.size(); ++k) out[k] = q[k].d;
  }

  // Sizes and constraint bookkeeping, the parameters, and the compiled
  // programs when the options and the model allow them.
  void Setup(const Eigen::VectorXd& params, SimulationSummary* sum) {
    ws.SetParameters(params);
    nq = model.nq();
    nv = model.nv();
    nc = model.nc();
    holonomic.assign(nc, true);
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const auto& c = model.constraints()[ci];
      for (int r = 0; r < c.rows; ++r) {
        const int row = model.constraint_row(ci) + r;
        if (c.kind == ConstraintKind::kNonholonomic)
          holonomic[row] = false;
        else
          hrows.push_back(row);
      }
    }
    nh = static_cast<int>(hrows.size());
    ws.use_compiled = opt.compiled;
    if (const CompiledModel* cm = ActiveCompiled(model, opt, sum)) {
      try {
        BuildPrograms(*cm);
        if (sum->evaluator == "compiled (native kernels)" &&
            !prog->res.native())
          sum->evaluator =
              "compiled (native stages; the IDAS residual interpreted: the "
              "build generated no kernel for these options)";
      } catch (const std::length_error& e) {
        // The residual's graph outgrew ExprGraph::kMaxNodes: the stages
        // stay compiled, the residual and Jacobian take the dual-number
        // path.
        sum->evaluator +=
            std::string(" (IDAS residual on dual numbers: ") + e.what() + ")";
      }
    }
  }

  // ---- forward sensitivities
  std::vector<SensParameter> sens;
  Eigen::VectorXd dp_scratch;
  const Eigen::VectorXd& ParamDirection(int i) {
    dp_scratch = Eigen::VectorXd::Zero(model.num_parameters());
    if (sens[i].kind == SensParameter::Kind::kModel)
      dp_scratch[sens[i].index] = 1.0;
    return dp_scratch;
  }
};

int ResFn(realtype t, N_Vector y, N_Vector yp, N_Vector rr, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    run->Residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                  N_VGetArrayPointer(rr));
  });
}

int QuadFn(realtype t, N_Vector y, N_Vector /*yp*/, N_Vector rq, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    run->Quadratures(t, N_VGetArrayPointer(y), N_VGetArrayPointer(rq));
  });
}

int RootFn(realtype t, N_Vector y, N_Vector /*yp*/, realtype* gout, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    run->Evaluate(t, yv);
    IdealMultipliers(run->ws, &run->kkt, &run->reported);
    run->roots->Evaluate(run->ws, run->reported.lambda, gout);
  });
}

// Exact Jacobian dF/dy + cj dF/dyp from the AD tangents, into a dense or a
// compressed-sparse-column SUNMatrix (the sparse pattern is fixed at setup:
// every entry that can be structurally nonzero).
int JacFn(realtype t,
          realtype cj,
          N_Vector y,
          N_Vector yp,
          N_Vector /*r*/,
          SUNMatrix Jac,
          void* ud,
          N_Vector,
          N_Vector,
          N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const int n = run->size();
    if (SUNMatGetID(Jac) == SUNMATRIX_DENSE) {
      run->DenseJacobian(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                         SM_DATA_D(Jac));
      return;
    }
    IdasRun::Programs* prog = run->prog.get();
    if (prog &&
        prog->Jacobian(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                       run->CurrentParameters())) {
      // Structural nonzeros only: the pattern, in the same column-major
      // order.
      const std::size_t m = prog->jac_entries.size();
      {
        sunindextype* colptr = SM_INDEXPTRS_S(Jac);
        sunindextype* rowval = SM_INDEXVALS_S(Jac);
        sunindextype k = 0;
        for (int j = 0; j < n; ++j) {
          colptr[j] = k;
          for (int i : run->pattern[j]) rowval[k++] = i;
        }
        colptr[n] = k;
        std::copy_n(prog->jac_values.data(), m, SM_DATA_S(Jac));
      }
      return;
    }
    run->Jacobian(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp));
    sunindextype* colptr = SM_INDEXPTRS_S(Jac);
    sunindextype* rowval = SM_INDEXVALS_S(Jac);
    realtype* val = SM_DATA_S(Jac);
    sunindextype k = 0;
    for (int j = 0; j < n; ++j) {
      colptr[j] = k;
      for (int i : run->pattern[j]) {
        rowval[k] = i;
        val[k++] = run->jac(i, j);
      }
    }
    colptr[n] = k;
  });
}

// Sensitivity residuals: the tangent of F along (s_i, s_i', e_i).
int SensResFn(int ns,
              realtype t,
              N_Vector y,
              N_Vector yp,
              N_Vector /*r*/,
              N_Vector* yS,
              N_Vector* ypS,
              N_Vector* rS,
              void* ud,
              N_Vector,
              N_Vector,
              N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    const double* ypv = N_VGetArrayPointer(yp);
    for (int i = 0; i < ns; ++i)
      run->SensResidual(t, yv, ypv, N_VGetArrayPointer(yS[i]),
                        N_VGetArrayPointer(ypS[i]), run->ParamDirection(i),
                        N_VGetArrayPointer(rS[i]));
  });
}

// Quadrature sensitivities: the tangent of the integrands along (s_i, e_i).
int QuadSensFn(int ns,
               realtype t,
               N_Vector y,
               N_Vector /*yp*/,
               N_Vector* yS,
               N_Vector* /*ypS*/,
               N_Vector /*rq*/,
               N_Vector* rqS,
               void* ud,
               N_Vector,
               N_Vector,
               N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    for (int i = 0; i < ns; ++i)
      run->QuadSens(t, yv, N_VGetArrayPointer(yS[i]), run->ParamDirection(i),
                    N_VGetArrayPointer(rqS[i]));
  });
}

std::string HintFor(int flag, Formulation f) {
  switch (flag) {
    case IDA_TOO_MUCH_WORK:
      return "raise the step limit, loosen --rtol/--atol, or shorten --t-end";
    case IDA_TOO_MUCH_ACC:
      return "the tolerances are below what double precision allows; loosen "
             "--rtol/--atol";
    case IDA_ERR_FAIL:
    case IDA_CONV_FAIL:
    case IDA_LSETUP_FAIL:
    case IDA_LSOLVE_FAIL:
      return f == Formulation::kIndex3
                 ? "the index-3 form is ill-conditioned at small steps; use "
                   "--formulation ggl"
                 : "the Newton matrix of an index-2 DAE grows ill-conditioned "
                   "as the step shrinks, so very small --atol (below ~1e-9) "
                   "can stall the corrector: pass --multiplier-atol 1 (the "
                   "multipliers are not in the error test), raise --atol, "
                   "try another "
                   "--formulation, or check for a singular configuration";
    case IDA_RES_FAIL:
    case IDA_REP_RES_ERR:
    case IDA_FIRST_RES_FAIL:
      return "a model function failed; see the message above";
    default:
      return "check the model and the options";
  }
}

}  // namespace

SimulationSummary SimulateIdas(const Model& model,
                               const InitialState& x0,
                               const Eigen::VectorXd& params,
                               const SimulationOptions& options,
                               Observer* observer) {
  SimulationSummary sum = StartSummary(model, options);
  if (options.formulation == Formulation::kProjection) {
    sum.error =
        "the projection formulation uses CVODES's projection interface; use "
        "--integrator cvodes-bdf, or --formulation ggl with IDAS";
    return sum;
  }

  IdasRun run(model, options);
  run.Setup(params, &sum);
  Recorder recorder(model, &sum, observer);

  // ---- consistent initialization: project, then vdot0 and lambda0 from
  // the KKT system, so that IDAS starts from a consistent (y0, yp0).
  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(&run.ws, options, &q, &v, &sum)) return sum;
  KktResult r0;
  try {
    run.ws.SetState(options.t0, q, v);
    EvaluateAll(&run.ws);
    run.kkt.Solve(run.ws, run.ws.bias, &r0);
  } catch (const std::exception& e) {
    sum.error = std::string("initial accelerations: ") + e.what();
    return sum;
  }

  auto ctx = MakeContext();
  const int n = run.size();
  auto y = MakeVector(n, ctx.get());
  auto yp = MakeVector(n, ctx.get());
  auto id = MakeVector(n, ctx.get());
  auto yq = MakeVector(run.layout.size(), ctx.get());
  {
    auto Y = View(y.get()), YP = View(yp.get()), ID = View(id.get());
    Y.segment(run.iq(), run.nq) = q;
    Y.segment(run.iv(), run.nv) = v;
    Y.segment(run.il(), run.nc) = r0.lambda;
    YP.segment(run.iq(), run.nq) = v;
    YP.segment(run.iv(), run.nv) = r0.vdot;
    ID.head(run.nq + run.nv).setOnes();  // differential; the rest algebraic
  }

  void* mem = IDACreate(ctx.get());
  if (mem == nullptr) throw std::runtime_error("IDACreate failed");
  struct MemGuard {
    void* m;
    ~MemGuard() { IDAFree(&m); }
  } guard{mem};
  MatrixPtr A;
  LinSolPtr LS;
  if (options.linear_solver == LinearSolver::kKlu) {
    run.BuildPattern();
    sunindextype nnz = 0;
    for (const auto& col : run.pattern) nnz += col.size();
    A.reset(SUNSparseMatrix(n, n, nnz, CSC_MAT, ctx.get()));
    LS.reset(SUNLinSol_KLU(y.get(), A.get(), ctx.get()));
  } else {
    A.reset(SUNDenseMatrix(n, n, ctx.get()));
    LS.reset(MakeDenseLuSolver(y.get(), A.get(), ctx.get()));
  }
  DAEDALUS_SUNDIALS_CHECK(IDAInit(mem, ResFn, options.t0, y.get(), yp.get()));
  DAEDALUS_SUNDIALS_CHECK(IDASetUserData(mem, &run));
  DAEDALUS_SUNDIALS_CHECK(IDASetErrHandlerFn(
      mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
  // Multipliers are excluded from the error test; their tolerance enters
  // only the Newton convergence test, where an index-2 multiplier is
  // resolved no better than round-off / h^2. --multiplier-atol loosens it.
  auto atolv = MakeVector(n, ctx.get());
  {
    auto A = View(atolv.get());
    A.setConstant(options.atol);
    if (options.multiplier_atol > 0.0)
      A.tail(n - run.nq - run.nv).setConstant(options.multiplier_atol);
  }
  DAEDALUS_SUNDIALS_CHECK(IDASVtolerances(mem, options.rtol, atolv.get()));

  DAEDALUS_SUNDIALS_CHECK(IDASetId(mem, id.get()));
  // Multipliers (and GGL multipliers) are algebraic: excluded from the
  // local error test, as in idasSlCrank_dns.
  DAEDALUS_SUNDIALS_CHECK(IDASetSuppressAlg(mem, SUNTRUE));
  DAEDALUS_SUNDIALS_CHECK(IDASetMaxNumSteps(mem, options.max_steps));
  DAEDALUS_SUNDIALS_CHECK(IDASetLinearSolver(mem, LS.get(), A.get()));
  if (options.jacobian == JacobianMethod::kAd ||
      options.linear_solver == LinearSolver::kKlu)
    DAEDALUS_SUNDIALS_CHECK(IDASetJacFn(mem, JacFn));
  DAEDALUS_SUNDIALS_CHECK(IDAQuadInit(mem, QuadFn, yq.get()));
  // Quadratures in the error test, except those whose integrands carry the
  // multipliers (constraint power, its ideal side, the GGL correction
  // power): the multipliers themselves are outside the error test (their
  // local errors are O(atol / h) in an index-2 form), and holding their
  // integrals to atol forces the step down without bound. A huge absolute
  // tolerance takes a component out of the test; its value is still the
  // integral of the solver's own multipliers.
  {
    auto qtol = MakeVector(run.layout.size(), ctx.get());
    auto Q = View(qtol.get());
    Q.setConstant(options.atol);
    const QuadLayout& L = run.layout;
    if (run.nc > 0) {
      Q.segment(L.constraint(), L.nc).setConstant(1e300);
      Q.segment(L.ideal(), L.nc).setConstant(1e300);
    }
    Q[L.stabilization()] = 1e300;
    DAEDALUS_SUNDIALS_CHECK(IDAQuadSVtolerances(mem, options.rtol, qtol.get()));
  }
  DAEDALUS_SUNDIALS_CHECK(IDASetQuadErrCon(mem, SUNTRUE));

  // ---- forward sensitivities (IDASensInit), consistent at t0.
  const SensitivityOptions& so = options.sensitivity;
  const bool fsa = so.method == SensMethod::kForward;
  int ns = 0;
  VectorArrayPtr yS, ypS, qS;
  Eigen::VectorXd pvals = params, pbar;
  std::vector<int> plist;
  Eigen::MatrixXd sens_now;
  if (fsa) {
    try {
      run.sens = ResolveSensParameters(model, so.parameters);
    } catch (const std::exception& e) {
      sum.error = e.what();
      return sum;
    }
    ns = static_cast<int>(run.sens.size());
    yS = MakeVectorArray(ns, y.get());
    ypS = MakeVectorArray(ns, y.get());
    qS = MakeVectorArray(ns, yq.get());
    for (int i = 0; i < ns; ++i) {
      const InitialSensitivity s0 =
          LinearizeInitialState(run.ws, &run.tws, r0.vdot, r0.lambda,
                                run.sens[i], so.initial_tangent);
      auto S = View(yS.get()[i]), SP = View(ypS.get()[i]);
      S.setZero();
      SP.setZero();
      S.segment(run.iq(), run.nq) = s0.dq;
      S.segment(run.iv(), run.nv) = s0.dv;
      S.segment(run.il(), run.nc) = s0.dlambda;
      SP.segment(run.iq(), run.nq) = s0.dv;
      SP.segment(run.iv(), run.nv) = s0.dvdot;
      View(qS.get()[i]).setZero();
    }
    if (so.difference_quotient) {
      sum.error = DqParameters(run.sens, pvals, &plist, &pbar);
      if (!sum.error.empty()) return sum;
    }
    const int ism = so.staggered ? IDA_STAGGERED : IDA_SIMULTANEOUS;
    DAEDALUS_SUNDIALS_CHECK(
        IDASensInit(mem, ns, ism, so.difference_quotient ? nullptr : SensResFn,
                    yS.get(), ypS.get()));
    if (so.difference_quotient) {
      // SUNDIALS perturbs pvals in place; the residual reads them back.
      run.dq_params = &pvals;
      DAEDALUS_SUNDIALS_CHECK(
          IDASetSensParams(mem, pvals.data(), pbar.data(), plist.data()));
    }
    DAEDALUS_SUNDIALS_CHECK(IDASensEEtolerances(mem));
    DAEDALUS_SUNDIALS_CHECK(
        IDASetSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
    // Exact even with --sens-dq: IDAS 6.4's internal difference quotient
    // for the quadratures' sensitivities evaluates the integrands into a
    // work vector of the state's length (IDAQuadSensRhs1InternalDQ, its
    // tmpQS), past its end when there are more quadratures than states.
    DAEDALUS_SUNDIALS_CHECK(IDAQuadSensInit(mem, QuadSensFn, qS.get()));
    DAEDALUS_SUNDIALS_CHECK(IDAQuadSensEEtolerances(mem));
    DAEDALUS_SUNDIALS_CHECK(
        IDASetQuadSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
    sens_now.resize(run.nq + run.nv + run.nc, ns);
    recorder.AttachSensitivities(&sens_now);
    StartForwardResult(model, run.sens, &sum.sensitivities);
  }
  auto read_sens = [&](double t, bool first) {
    if (!fsa) return;
    if (!first) {
      double ts = t;
      DAEDALUS_SUNDIALS_CHECK(IDAGetSens(mem, &ts, yS.get()));
    }
    for (int i = 0; i < ns; ++i)
      sens_now.col(i) = ConstView(yS.get()[i]).head(run.nq + run.nv + run.nc);
  };

  const RootSet roots(model);
  run.roots = &roots;
  std::vector<int> found(static_cast<size_t>(roots.size()), 0);
  if (roots.size() > 0)
    DAEDALUS_SUNDIALS_CHECK(IDARootInit(mem, roots.size(), RootFn));

  auto sample = [&](double t, bool first) {
    const auto Y = ConstView(y.get());
    run.Evaluate(t, Y.data());
    read_sens(t, first);
    IdealMultipliers(run.ws, &run.kkt, &run.reported);
    Eigen::VectorXd w;
    if (!first) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(IDAGetQuad(mem, &tq, yq.get()));
      w = ConstView(yq.get());
    }
    recorder.Record(run.ws, run.reported.vdot, run.reported.lambda, w, 0.0,
                    first);
  };
  auto collect_stats = [&] {
    IDAGetNumSteps(mem, &sum.stats.steps);
    IDAGetNumResEvals(mem, &sum.stats.rhs_evals);
    sum.residual_evals = sum.stats.rhs_evals;
    IDAGetNumJacEvals(mem, &sum.stats.jacobian_evals);
    IDAGetNumErrTestFails(mem, &sum.stats.error_test_failures);
    IDAGetNumNonlinSolvConvFails(mem, &sum.stats.nonlinear_conv_failures);
  };

  try {
    sample(options.t0, true);
    const long nout = static_cast<long>(
        std::ceil((options.t_end - options.t0) / options.output_step - 1e-9));
    for (long k = 1; k <= nout; ++k) {
      const double tout =
          std::min(options.t0 + k * options.output_step, options.t_end);
      double tret = 0.0;
      run.Reset();
      const int flag =
          IDASolve(mem, tout, &tret, y.get(), yp.get(), IDA_NORMAL);
      if (flag < 0) {
        std::unique_ptr<char, decltype(&std::free)> name(
            IDAGetReturnFlagName(flag), &std::free);
        std::ostringstream os;
        os << "IDASolve failed with " << name.get() << " (flag " << flag
           << ") at t = " << tret;
        os << run.Detail();
        os << "; hint: " << HintFor(flag, options.formulation);
        sum.error = os.str();
        collect_stats();
        return sum;
      }
      sample(tret, false);
      if (flag == IDA_ROOT_RETURN) {
        DAEDALUS_SUNDIALS_CHECK(IDAGetRootInfo(mem, found.data()));
        if (roots.Record(model, tret, found.data(), &sum)) break;
        if (tret < tout) --k;
        continue;
      }
      const Sample& f = sum.final;
      if (options.drift_tol > 0.0 &&
          std::max(f.drift_position, f.drift_velocity) > options.drift_tol) {
        std::ostringstream os;
        os << "drift " << std::max(f.drift_position, f.drift_velocity)
           << " exceeds --drift-tol " << options.drift_tol << " at t = " << tret
           << " (IDAS runs do not escalate); hint: tighten --rtol/--atol or "
              "use --formulation ggl";
        sum.error = os.str();
        collect_stats();
        return sum;
      }
    }
  } catch (const std::exception& e) {
    sum.error = std::string("evaluation failed at an output time: ") + e.what();
    collect_stats();
    return sum;
  }
  collect_stats();
  if (fsa) {
    SensitivityResult& sr = sum.sensitivities;
    sr.final = sens_now;
    double tq = sum.t_reached;
    DAEDALUS_SUNDIALS_CHECK(IDAGetQuadSens(mem, &tq, qS.get()));
    for (int k = 0; k < run.layout.nuq; ++k) {
      Eigen::VectorXd g(ns);
      for (int i = 0; i < ns; ++i)
        g[i] = ConstView(qS.get()[i])[run.layout.user() + k];
      sr.quadratures.emplace_back(model.quadrature_name(k), g);
    }
  }
  sum.ok = true;
  return sum;
}

void PrepareIdasPrograms(const Model& model,
                         const SimulationOptions& options,
                         const Eigen::VectorXd& params) {
  IdasRun run(model, options);
  SimulationSummary sum;
  run.Setup(params, &sum);
}

IdasProbe ProbeIdas(const Model& model,
                    const SimulationOptions& options,
                    const Eigen::VectorXd& params,
                    double t,
                    const Eigen::VectorXd& y,
                    const Eigen::VectorXd& yp,
                    double cj) {
  IdasRun run(model, options);
  SimulationSummary sum;
  run.Setup(params, &sum);
  const int n = run.size();
  if (y.size() != n || yp.size() != n)
    throw std::invalid_argument("ProbeIdas: y and yp must have " +
                                std::to_string(n) + " entries");
  IdasProbe r;
  r.compiled = run.prog != nullptr;
  r.residual.resize(n);
  run.Residual(t, y.data(), yp.data(), r.residual.data());
  r.jacobian.resize(n, n);
  run.DenseJacobian(t, cj, y.data(), yp.data(), r.jacobian.data());
  r.quadratures.resize(run.layout.size());
  run.Quadratures(t, y.data(), r.quadratures.data());
  return r;
}

IdasTangentProbe ProbeIdasTangent(const Model& model,
                                  const SimulationOptions& options,
                                  const Eigen::VectorXd& params,
                                  double t,
                                  const Eigen::VectorXd& y,
                                  const Eigen::VectorXd& yp,
                                  const Eigen::VectorXd& dy,
                                  const Eigen::VectorXd& dyp,
                                  const Eigen::VectorXd& dp) {
  IdasRun run(model, options);
  SimulationSummary sum;
  run.Setup(params, &sum);
  const int n = run.size();
  if (y.size() != n || yp.size() != n || dy.size() != n || dyp.size() != n ||
      dp.size() != model.num_parameters())
    throw std::invalid_argument("ProbeIdasTangent: sizes disagree");
  IdasTangentProbe r;
  r.compiled = run.prog != nullptr && run.prog->has_sens;
  r.residual.resize(n);
  run.SensResidual(t, y.data(), yp.data(), dy.data(), dyp.data(), dp,
                   r.residual.data());
  r.quadratures.resize(run.layout.size());
  run.QuadSens(t, y.data(), dy.data(), dp, r.quadratures.data());
  return r;
}

}  // namespace daedalus::internal
