// One call of each recursive algorithm on the project's humanoid on a
// floating base (problems/data/humanoid.urdf through the URDF importer:
// a free base and 26 revolute joints, nq 33, nv 32), double precision, the
// scratch (TreeData) reused between calls as a simulation does:
// ABA (forward dynamics), RNEA (inverse dynamics), CRBA (the mass matrix).
// docs/performance.md, "Recursive algorithms on the humanoid".
//
//   build-bench/bench/humanoid_bench [--benchmark_min_time=0.5]
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <random>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "daedalus/urdf.hpp"

namespace {

namespace mb = daedalus::mb;

struct Humanoid {
  mb::TreeDynamics dyn;
  mb::TreeData<double> data;
  Eigen::VectorXd q, v, tau, vdot;
};

Humanoid& TheHumanoid() {
  static Humanoid h = [] {
    daedalus::ModelBuilder b("humanoid");
    daedalus::urdf::ImportOptions options;
    options.floating_base = true;
    const daedalus::urdf::Robot robot = daedalus::urdf::Import(
        std::string(DAEDALUS_DATA_DIR) + "/humanoid.urdf", &b, options);
    const daedalus::Model model = std::move(b).Build();
    Humanoid out{mb::TreeDynamics(robot.kinematics), {}, {}, {}, {}, {}};
    out.data = out.dyn.MakeData<double>();
    out.dyn.SetParameters<double>(model.default_parameters(), &out.data);
    std::mt19937 gen{7};
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    const int nq = out.dyn.nq(), nv = out.dyn.nv();
    out.q.resize(nq);
    for (int i = 0; i < nq; ++i) out.q[i] = d(gen);
    out.q.segment<4>(3).normalize();  // the base's quaternion
    out.v.resize(nv);
    out.tau.resize(nv);
    out.vdot.resize(nv);
    for (int i = 0; i < nv; ++i)
      out.v[i] = d(gen), out.tau[i] = d(gen), out.vdot[i] = d(gen);
    return out;
  }();
  return h;
}

void Aba(benchmark::State& state) {
  Humanoid& h = TheHumanoid();
  for (auto _ : state) {
    Eigen::VectorXd a = h.dyn.ForwardDynamics<double>(h.q, h.v, h.tau, &h.data);
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["nv"] = h.dyn.nv();
}
void Rnea(benchmark::State& state) {
  Humanoid& h = TheHumanoid();
  for (auto _ : state) {
    Eigen::VectorXd t =
        h.dyn.InverseDynamics<double>(h.q, h.v, h.vdot, &h.data);
    benchmark::DoNotOptimize(t.data());
  }
  state.counters["nv"] = h.dyn.nv();
}
void Crba(benchmark::State& state) {
  Humanoid& h = TheHumanoid();
  for (auto _ : state) {
    Eigen::MatrixXd m = h.dyn.MassMatrix<double>(h.q, &h.data);
    benchmark::DoNotOptimize(m.data());
  }
  state.counters["nv"] = h.dyn.nv();
}

BENCHMARK(Aba)->Name("humanoid/ABA");
BENCHMARK(Rnea)->Name("humanoid/RNEA");
BENCHMARK(Crba)->Name("humanoid/CRBA");

}  // namespace

BENCHMARK_MAIN();
