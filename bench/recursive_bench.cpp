// Forward dynamics of a spatial chain of N links in joint coordinates, per
// call: ABA (O(N)), CRBA + RNEA + Cholesky (O(N^2) to form M, O(N^3) to
// factor it), and the energy form (M and h by automatic differentiation of
// the per-body energies, then Cholesky) (docs/multibody.md, "Recursive
// algorithms"; docs/performance.md).
//
//   build-bench/bench/recursive_bench [--benchmark_filter=...]
//
// The chain: N revolute joints alternating about z and y, 0.1 m apart,
// each link 1 kg with its centre of mass 0.05 m along the link and a full
// inertia tensor. After the runs it prints the times and the ratios
// t(N) / t(10) for N = 100 and 1000 (linear cost: 10 and 100).
//
// PlanarAba and SpatialAbaOnPlanar: chain_reduced's planar chain of N
// uniform links (total 1 m, 1 kg) by the planar ABA (3-vectors,
// TreeDynamics::planar(); all joints revolute: the specialized recurrences
// of src/multibody/planar_aba_revolute.cpp), and the same chain with its joint
// frames moved off the plane along z, which makes it go through the 6D ABA (the
// same in-plane accelerations). ForwardRoute: the whole right-hand side of a
// chain_reduced run (EvaluateForward: forces, the ABA through the model's
// InertialFn, no energies).
#include <benchmark/benchmark.h>

#include <Eigen/Cholesky>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_dynamics.hpp"

namespace {

using daedalus::mb::DynamicsForm;

struct Chain {
  daedalus::Model model;
  daedalus::mb::TreeDynamics dyn;
};

Chain MakeChain(int n) {
  namespace mb = daedalus::mb;
  // (GCC 12 warns falsely, -Wrestrict, on "literal" + std::string.)
  std::string model_name = "chain";
  model_name += std::to_string(n);
  daedalus::ModelBuilder b(model_name);
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(mb::PVec(0.0, 0.0, -9.81));
  mb::FrameIndex parent = s.world();
  for (int i = 0; i < n; ++i) {
    std::string name = "l";
    name += std::to_string(i);
    const mb::BodyIndex body =
        s.AddBody(name, mb::SpatialBody(1.0, mb::PVec(0.0, 0.01, 0.05), 0.003,
                                        0.0032, 0.001, 1e-4, -2e-4, 3e-4));
    s.AddJoint(name,
               mb::Joint::Revolute(i % 2 == 0 ? Eigen::Vector3d::UnitZ()
                                              : Eigen::Vector3d::UnitY()),
               parent, s.BodyFrame(body));
    std::string tip = name;
    tip += "_tip";
    parent = s.AddFrame(tip, body, mb::PVec(0.0, 0.0, 0.1));
  }
  const mb::Kinematics kin = std::move(s).AddTo(&b, DynamicsForm::kEnergy);
  return {std::move(b).Build(), mb::TreeDynamics(kin)};
}

// chain_reduced's chain (problems/models/chain_reduced.cpp) as a spatial
// description; z != 0 lifts the joint frames off the plane.
Chain MakePlanarChain(int n, double z) {
  namespace mb = daedalus::mb;
  std::string model_name = "planar_chain";
  model_name += std::to_string(n);
  daedalus::ModelBuilder b(model_name);
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(mb::PVec(0.0, -9.81, 0.0));
  const double l = 1.0 / n, m = 1.0 / n;
  mb::FrameIndex parent = s.world();
  for (int i = 0; i < n; ++i) {
    std::string name = "l";
    name += std::to_string(i);
    const mb::BodyIndex body = s.AddBody(
        name, mb::SpatialBody(m, mb::PVec(0.0, -l / 2.0, 0.0), m * l * l / 12.0,
                              1e-9, m * l * l / 12.0, 0.0, 0.0, 0.0));
    s.AddJoint(name, mb::Joint::Revolute(Eigen::Vector3d::UnitZ()), parent,
               s.BodyFrame(body));
    std::string tip = name;
    tip += "_tip";
    parent = s.AddFrame(tip, body, mb::PVec(0.0, -l, z));
  }
  const mb::Kinematics kin = std::move(s).AddTo(&b, DynamicsForm::kRecursive);
  return {std::move(b).Build(), mb::TreeDynamics(kin)};
}

struct State {
  Eigen::VectorXd q, v, tau;
};
State RandomState(int n) {
  std::mt19937 gen{7};
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  State s{Eigen::VectorXd(n), Eigen::VectorXd(n), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i)
    s.q[i] = d(gen), s.v[i] = d(gen), s.tau[i] = d(gen);
  return s;
}

std::map<std::string, std::map<int, double>> g_times;  // ns per call

void Record(benchmark::State& state, const char* what, int n) {
  state.counters["N"] = n;
  state.SetItemsProcessed(state.iterations());
  (void)what;
}

void Aba(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Chain c = MakeChain(n);
  const State x = RandomState(n);
  auto data = c.dyn.MakeData<double>();
  c.dyn.SetParameters<double>(c.model.default_parameters(), &data);
  for (auto _ : state) {
    Eigen::VectorXd vdot =
        c.dyn.ForwardDynamics<double>(x.q, x.v, x.tau, &data);
    benchmark::DoNotOptimize(vdot.data());
  }
  Record(state, "aba", n);
}

void PlanarAbaOn(benchmark::State& state, double z, const char* what) {
  const int n = static_cast<int>(state.range(0));
  const Chain c = MakePlanarChain(n, z);
  if (c.dyn.planar() != (z == 0.0)) state.SkipWithError("planar() unexpected");
  const State x = RandomState(n);
  auto data = c.dyn.MakeData<double>();
  c.dyn.SetParameters<double>(c.model.default_parameters(), &data);
  for (auto _ : state) {
    Eigen::VectorXd vdot =
        c.dyn.ForwardDynamics<double>(x.q, x.v, x.tau, &data);
    benchmark::DoNotOptimize(vdot.data());
  }
  Record(state, what, n);
}
void PlanarAba(benchmark::State& state) { PlanarAbaOn(state, 0.0, "planar"); }
void SpatialAbaOnPlanar(benchmark::State& state) {
  PlanarAbaOn(state, 0.01, "spatial");
}

void ForwardRoute(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Chain c = MakePlanarChain(n, 0.0);
  const State x = RandomState(n);
  daedalus::Workspace ws(c.model);
  ws.use_compiled = false;
  ws.SetParameters(c.model.default_parameters());
  Eigen::VectorXd vdot(n);
  for (auto _ : state) {
    ws.SetState(0.0, x.q, x.v);
    daedalus::EvaluateForward(&ws, false, &vdot);
    benchmark::DoNotOptimize(vdot.data());
  }
  Record(state, "forward", n);
}

void CrbaCholesky(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Chain c = MakeChain(n);
  const State x = RandomState(n);
  auto data = c.dyn.MakeData<double>();
  c.dyn.SetParameters<double>(c.model.default_parameters(), &data);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  for (auto _ : state) {
    const Eigen::MatrixXd m = c.dyn.MassMatrix<double>(x.q, &data);
    const Eigen::VectorXd h =
        c.dyn.InverseDynamics<double>(x.q, x.v, zero, &data);
    Eigen::VectorXd vdot = m.llt().solve(x.tau - h);
    benchmark::DoNotOptimize(vdot.data());
  }
  Record(state, "crba", n);
}

void EnergyAd(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Chain c = MakeChain(n);
  const State x = RandomState(n);
  daedalus::Workspace ws(c.model);
  ws.use_compiled = false;
  ws.SetParameters(c.model.default_parameters());
  for (auto _ : state) {
    ws.SetState(0.0, x.q, x.v);
    daedalus::EvaluateAll(&ws);
    Eigen::VectorXd vdot = ws.M.llt().solve(x.tau - ws.h);
    benchmark::DoNotOptimize(vdot.data());
  }
  Record(state, "energy", n);
}

BENCHMARK(Aba)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(PlanarAba)->Arg(10)->Arg(100)->Arg(1000)->Unit(
    benchmark::kMicrosecond);
BENCHMARK(SpatialAbaOnPlanar)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(ForwardRoute)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(CrbaCholesky)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
// The energy form at N = 1000 takes minutes per call (dense AD of M).
BENCHMARK(EnergyAd)->Arg(10)->Arg(100)->Unit(benchmark::kMicrosecond);

// Collects the per-call times for the summary table.
class Table : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const std::string name = r.benchmark_name();
      const std::string fn = name.substr(0, name.find('/'));
      const int n = std::stoi(name.substr(name.find('/') + 1));
      // CPU time: on a shared machine the wall time includes waiting.
      g_times[fn][n] = r.GetAdjustedCPUTime() * 1e3;  // us -> ns
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Table table;
  benchmark::RunSpecifiedBenchmarks(&table);
  std::printf(
      "\nCPU time per call (-1: not run):\n| method | N = 10 [us] | N = 100 "
      "[us] | N = 1000 [us] | "
      "t(100)/t(10) | t(1000)/t(10) |\n|---|---|---|---|---|---|\n");
  for (const auto& [fn, t] : g_times) {
    auto at = [&](int n) { return t.count(n) ? t.at(n) * 1e-3 : -1.0; };
    auto ratio = [&](int n) {
      return t.count(n) && t.count(10) ? t.at(n) / t.at(10) : -1.0;
    };
    std::printf("| %s | %.2f | %.2f | %.2f | %.1f | %.1f |\n", fn.c_str(),
                at(10), at(100), at(1000), ratio(100), ratio(1000));
  }
  benchmark::Shutdown();
  return 0;
}
