// Cost of forward and adjoint sensitivities relative to the plain run
// (issue 5). Model: ten carts on a line joined by springs k1..k10 (the
// first to a wall) with dampers c1..c10, the first and last cart tied by a
// rigid rod (one holonomic constraint): 20 parameters. Functional: the time
// integral of the kinetic energy over 2 s.
//
// Run through bench/sensitivity_cost.py, which prints the ratios.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"

namespace daedalus {
namespace {

constexpr int kCarts = 10;

Model Carts() {
  ModelBuilder b("carts");
  std::vector<std::string> names;
  // Names built with append: GCC 12 warns falsely (-Wrestrict, bug 105329)
  // on "literal" + std::to_string() at -O3.
  auto name = [](char c, int i) {
    std::string s(1, c);
    s.append(std::to_string(i));
    return s;
  };
  for (int i = 0; i < kCarts; ++i) names.push_back(name('x', i));
  b.Coordinates(names);
  std::vector<Param> k, c;
  for (int i = 0; i < kCarts; ++i)
    k.push_back(b.Parameter(name('k', i + 1), 10.0 + i));
  for (int i = 0; i < kCarts; ++i)
    c.push_back(b.Parameter(name('c', i + 1), 0.1 + 0.01 * i));
  b.KineticEnergy([](const auto& x) {
    Scalar<decltype(x)> t = 0.0;
    for (int i = 0; i < kCarts; ++i) t += 0.5 * x.v[i] * x.v[i];
    return t;
  });
  b.PotentialEnergy([k](const auto& x) {
    Scalar<decltype(x)> e = 0.5 * x.p[k[0]] * x.q[0] * x.q[0];
    for (int i = 1; i < kCarts; ++i) {
      const auto d = x.q[i] - x.q[i - 1];
      e += 0.5 * x.p[k[i]] * d * d;
    }
    return e;
  });
  b.OtherLoads([c](const auto& x) {
    VecX<Scalar<decltype(x)>> f(kCarts);
    for (int i = 0; i < kCarts; ++i) f[i] = -x.p[c[i]] * x.v[i];
    return f;
  });
  b.Holonomic("rod", [](const auto& x) {
    return x.q[kCarts - 1] - x.q[0] - (kCarts - 1.0);
  });
  b.RunningFunctional("kinetic", [](const auto& x) {
    Scalar<decltype(x)> t = 0.0;
    for (int i = 0; i < kCarts; ++i) t += 0.5 * x.v[i] * x.v[i];
    return t;
  });
  return std::move(b).Build();
}

InitialState Start() {
  InitialState s;
  s.q = Eigen::VectorXd::LinSpaced(kCarts, 0.0, kCarts - 1.0);
  s.v = Eigen::VectorXd::Zero(kCarts);
  s.v[3] = 1.0;  // a kick inside the chain
  s.v[0] = s.v[kCarts - 1] = 0.3;
  return s;
}

SimulationOptions Options(Integrator integrator) {
  SimulationOptions o;
  o.t_end = 2.0;
  o.output_step = 2.0;
  o.rtol = 1e-8;
  o.atol = 1e-9;
  o.formulation = Formulation::kBaumgarte;
  o.integrator = integrator;
  return o;
}

std::vector<std::string> FirstParameters(const Model& m, int n) {
  std::vector<std::string> out;
  // Alternate stiffness and damping so both kinds are represented.
  for (int i = 0; i < n; ++i)
    out.push_back(m.parameter_names()[(i % 2) * kCarts + i / 2]);
  return out;
}

const Model& TheModel() {
  static const Model model = Carts();
  return model;
}

SimulationSummary Run(benchmark::State& state, const SimulationOptions& o) {
  const Model& model = TheModel();
  SimulationSummary s;
  for (auto _ : state) {
    s = Simulate(model, Start(), model.default_parameters(), o);
    if (!s.ok) state.SkipWithError(s.error.c_str());
    benchmark::DoNotOptimize(s.final.q.data());
  }
  return s;
}

// The forward sensitivities of the final positions against central
// differences of plain runs (outside the timed loop), so that a faster
// path cannot pass with wrong sensitivities. Step 1e-3 relative: the
// truncation error is ~1e-6 |d3x/dp3| p^2 / 6; the differenced runs are at
// rtol 1e-11, whose error (~1e-11 |x|, |x| <= 9) divided by 2h stays near
// 1e-7 of the columns' largest entries (0.02 to 0.1). At step 1e-4 that
// noise alone reached 1.1e-5 for c1 (1.3e-6 at 1e-3). Measured worst over
// the 20 parameters: 2.4e-6; the bound is 1e-5 of the column's largest
// entry.
void CheckForward(benchmark::State& state,
                  const SimulationOptions& o,
                  const SimulationSummary& s) {
  if (!s.ok) return;
  const Model& model = TheModel();
  const int nq = model.nq();
  SimulationOptions od = o;
  od.sensitivity = SensitivityOptions();
  od.rtol = 1e-11;
  od.atol = 1e-12;
  const Eigen::VectorXd p = model.default_parameters();
  double worst = 0.0;
  for (std::size_t i = 0; i < o.sensitivity.parameters.size(); ++i) {
    const int k = model.ParameterIndex(o.sensitivity.parameters[i]);
    const double h = 1e-3 * std::abs(p[k]);
    Eigen::VectorXd pp = p, pm = p;
    pp[k] += h;
    pm[k] -= h;
    const SimulationSummary a = Simulate(model, Start(), pp, od);
    const SimulationSummary b = Simulate(model, Start(), pm, od);
    if (!a.ok || !b.ok) {
      state.SkipWithError("central differences: a run failed");
      return;
    }
    const Eigen::VectorXd fd = (a.final.q - b.final.q) / (2.0 * h);
    const Eigen::VectorXd fwd =
        s.sensitivities.final.col(static_cast<Eigen::Index>(i)).head(nq);
    const double e =
        (fwd - fd).cwiseAbs().maxCoeff() / fd.cwiseAbs().maxCoeff();
    worst = std::max(worst, e);
  }
  state.counters["fd_rel_err"] = worst;
  if (!(worst < 1e-5))
    state.SkipWithError(
        "forward sensitivities disagree with central differences");
}

void BM_PlainIdas(benchmark::State& state) {
  Run(state, Options(Integrator::kIdas));
}
void BM_ForwardIdas(benchmark::State& state) {
  SimulationOptions o = Options(Integrator::kIdas);
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters =
      FirstParameters(Carts(), static_cast<int>(state.range(0)));
  CheckForward(state, o, Run(state, o));
}
void BM_PlainCvodes(benchmark::State& state) {
  Run(state, Options(Integrator::kCvodesBdf));
}
void BM_AdjointCvodes(benchmark::State& state) {
  SimulationOptions o = Options(Integrator::kCvodesBdf);
  o.sensitivity.method = SensMethod::kAdjoint;
  o.sensitivity.functional = "kinetic";
  o.sensitivity.parameters =
      FirstParameters(Carts(), static_cast<int>(state.range(0)));
  Run(state, o);
}
// The IDAS adjoint (src/integrate/adjoint_idas.cpp): the adjoint DAE of
// the run's own residual, here the index-1 Baumgarte form.
void BM_AdjointIdas(benchmark::State& state) {
  SimulationOptions o = Options(Integrator::kIdas);
  o.sensitivity.method = SensMethod::kAdjoint;
  o.sensitivity.functional = "kinetic";
  o.sensitivity.parameters =
      FirstParameters(Carts(), static_cast<int>(state.range(0)));
  Run(state, o);
}

BENCHMARK(BM_PlainIdas)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardIdas)
    ->Arg(1)
    ->Arg(2)
    ->Arg(5)
    ->Arg(10)
    ->Arg(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainCvodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AdjointCvodes)->Arg(2)->Arg(20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AdjointIdas)->Arg(2)->Arg(20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace daedalus
