// Cost of one evaluation of the derived dynamics and one KKT solve, per
// problem and per KKT path. Run: build-bench/bench/kkt_bench
#include <benchmark/benchmark.h>

#include "daedalus/kkt.hpp"
#include "pendulum.hpp"
#include "slider_crank.hpp"

namespace {

using daedalus::Problem;

void EvaluateAndSolve(benchmark::State& state,
                      const Problem& p,
                      daedalus::KktMethod method) {
  daedalus::Workspace ws(p.model);
  const daedalus::InitialState x0 = p.initial(p.model.default_parameters());
  daedalus::KktOptions o;
  o.method = method;
  daedalus::KktSolver solver(p.model, o);
  daedalus::KktResult r;
  for (auto _ : state) {
    ws.SetState(0.1, x0.q, x0.v);
    daedalus::EvaluateAll(&ws);
    solver.Solve(ws, ws.bias, &r);
    benchmark::DoNotOptimize(r.vdot.data());
  }
}

void BM_PendulumSchur(benchmark::State& s) {
  EvaluateAndSolve(s, daedalus::problems::PendulumProblem(),
                   daedalus::KktMethod::kSchur);
}
void BM_SliderCrankSchur(benchmark::State& s) {
  EvaluateAndSolve(s, daedalus::problems::SliderCrankProblem(),
                   daedalus::KktMethod::kSchur);
}
void BM_SliderCrankFullLu(benchmark::State& s) {
  EvaluateAndSolve(s, daedalus::problems::SliderCrankProblem(),
                   daedalus::KktMethod::kFullLu);
}
BENCHMARK(BM_PendulumSchur);
BENCHMARK(BM_SliderCrankSchur);
BENCHMARK(BM_SliderCrankFullLu);

}  // namespace
