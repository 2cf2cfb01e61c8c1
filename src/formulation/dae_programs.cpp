#include "formulation/dae_programs.hpp"

#include <algorithm>
#include <memory>
#include <string>

namespace daedalus::internal {

void DaeUnknownSyms(SymbolicModel& sm,
                    const DaeLayout& L,
                    VecX<Sym>* Y,
                    VecX<Sym>* YP) {
  const bool ggl = L.form == Formulation::kGgl;
  const int n = L.size();
  Y->resize(n);
  YP->resize(n);
  Y->segment(L.iq(), L.nq) = sm.q;
  Y->segment(L.iv(), L.nv) = sm.v;
  Y->segment(L.il(), L.nc) = sm.NamedInputSyms("lambda", L.nc);
  if (ggl) Y->segment(L.im(), L.nh) = sm.NamedInputSyms("mu", L.nh);
  YP->segment(L.iq(), L.nq) = sm.NamedInputSyms("qdot", L.nq);
  YP->segment(L.iv(), L.nv) = sm.vdot;  // what sm.Mvdot_h is built on
  YP->segment(L.il(), L.nc) = sm.NamedInputSyms("lambda'", L.nc);
  if (ggl) YP->segment(L.im(), L.nh) = sm.NamedInputSyms("mu'", L.nh);
}

std::unique_ptr<DaePrograms> DaePrograms::Build(const CompiledModel& cm,
                                                const Model& model,
                                                const DaeLayout& L,
                                                const QuadLayout& Q,
                                                const SimulationOptions& opt) {
  auto p = std::make_unique<DaePrograms>();
  const bool ggl = L.form == Formulation::kGgl;
  cm.WithSymbolic([&](SymbolicModel& sm) {
    const int n = L.size(), np = model.num_parameters();
    VecX<Sym> Y, YP;
    DaeUnknownSyms(sm, L, &Y, &YP);
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
    AssembleDae(L, sm, Y, YP, F);
    std::vector<int> f(n);
    for (int i = 0; i < n; ++i) f[i] = F[i].node();
    p->res = ExprProgram(sm.graph, inputs, f);

    // Column j: the derivative of F along y_j = 1, yp_j = cj.
    std::vector<int> entries;
    for (int j = 0; j < n; ++j) {
      std::vector<int> seed(static_cast<std::size_t>(sm.graph.num_inputs()), 0);
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
    if (L.form != Formulation::kBaumgarte || L.nc == 0) {
      Sym stab = 0.0;
      if (ggl && L.nh > 0) stab = sm.EnergyAlongQ(-GtMu(L, sm, Y));
      VecX<Sym> out = VecX<Sym>::Zero(Q.size());
      QuadratureIntegrands(Q, sm, Y.segment(L.il(), L.nc), stab, out);
      for (Eigen::Index k = 0; k < out.size(); ++k)
        quad_nodes.push_back(out[k].node());
      p->quad = ExprProgram(sm.graph, inputs, quad_nodes);
      p->has_quad = true;
    }
    const SensitivityOptions& so = opt.sensitivity;
    if (so.method == SensMethod::kForward) {
      // One derivative pass along y_j -> dy_j, yp_j -> dyp_j, p_k -> dp_k:
      // the sensitivity residual (unless SUNDIALS's difference quotients
      // replace it) and the integrands' tangent (always exact), which does
      // not read yp. The symbolic model is shared by the formulations,
      // whose state sizes differ: the tangent inputs are named by their
      // size.
      const std::string size = std::to_string(n);
      const VecX<Sym> dY = sm.NamedInputSyms("dy" + size, n);
      const VecX<Sym> dYP = sm.NamedInputSyms("dyp" + size, n);
      const VecX<Sym> dP = sm.NamedInputSyms("dp", np);
      std::vector<int> seed(static_cast<std::size_t>(sm.graph.num_inputs()), 0);
      std::vector<int> sens_inputs = inputs;
      for (int j = 0; j < n; ++j) {
        seed[number(Y[j])] = dY[j].node();
        seed[number(YP[j])] = dYP[j].node();
      }
      // Only the parameters the run asks for are seeded (all when it names
      // none, as ResolveSensParameters reads an empty list): dp is zero in
      // every other entry, and their terms were 23 % of the sensitivity
      // residuals' instructions on the sensitivity bench (ten carts, 20
      // parameters) at n_p = 1. The inputs stay [.. | dp] of all np
      // parameters.
      std::vector<char> seeded(static_cast<std::size_t>(np),
                               so.parameters.empty() ? 1 : 0);
      const std::vector<std::string>& names = model.parameter_names();
      for (const std::string& name : so.parameters)
        for (int k = 0; k < np; ++k)
          if (names[static_cast<std::size_t>(k)] == name)
            seeded[static_cast<std::size_t>(k)] = 1;
      for (int k = 0; k < np; ++k)
        if (seeded[static_cast<std::size_t>(k)])
          seed[sm.p_input(k)] = dP[k].node();
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
  return p;
}

void DaePrograms::FillTangent(double t,
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

bool DaePrograms::Jacobian(double t,
                           double cj,
                           const double* y,
                           const double* yp,
                           const Eigen::VectorXd& p) {
  Fill(t, y, yp, p, cj);
  jac.Run(in.data(), jac_values.data(), s_jac.data());
  return AllFinite(jac_values.data(), jac.num_outputs());
}

bool DaePrograms::SensResidual(double t,
                               const double* y,
                               const double* yp,
                               const Eigen::VectorXd& p,
                               const double* dy,
                               const double* dyp,
                               const Eigen::VectorXd& dp,
                               double* out) {
  FillTangent(t, y, yp, p, dy, dyp, dp);
  sens.Run(sin.data(), out, s_sens.data());
  return AllFinite(out, n);
}

bool DaePrograms::QuadSens(double t,
                           const double* y,
                           const Eigen::VectorXd& p,
                           const double* dy,
                           const Eigen::VectorXd& dp,
                           double* out) {
  FillTangent(t, y, y, p, dy, nullptr, dp);
  qsens.Run(sin.data(), out, s_qsens.data());
  return AllFinite(out, qsens.num_outputs());
}

}  // namespace daedalus::internal
