// KKT solve and 1 s simulation of the maximal-coordinate chain versus N,
// for every solver path, with a hand-written Eigen + CHOLMOD baseline of
// the same matrices in the same process (docs/performance.md).
//
//   build-bench/bench/chain_bench [--benchmark_filter=...]
//
// After the runs it prints a Markdown table of times per solve, the fitted
// scaling exponent between N = 100 and N = 10000, the framework-overhead
// ratio at N = 1000 and the dense/sparse crossover.
#include <benchmark/benchmark.h>

#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "chain.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_kkt.hpp"

namespace {

using daedalus::KktMethod;
using daedalus::SparseMatrixD;

// The chain at its release state with a random velocity field (so that the
// bias and the multipliers are generic), all stages evaluated.
daedalus::SparseWorkspace ChainState(int n) {
  const daedalus::Problem p = daedalus::problems::ChainProblem(n);
  daedalus::SparseWorkspace ws(p.model);
  daedalus::InitialState x = p.initial(p.model.default_parameters());
  std::mt19937 gen{42};
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (Eigen::Index i = 0; i < x.v.size(); ++i) x.v[i] = d(gen);
  ws.SetState(0.0, x.q, x.v);
  daedalus::EvaluateSparseAll(&ws);
  return ws;
}

void SparseSolve(benchmark::State& state, KktMethod method) {
  const int n = static_cast<int>(state.range(0));
  daedalus::SparseWorkspace ws = ChainState(n);
  daedalus::KktOptions o;
  o.method = method;
  daedalus::SparseKktSolver solver(o);
  const Eigen::VectorXd f = ws.Bu - ws.h;
  Eigen::VectorXd vdot(ws.M.rows()), lambda(ws.J.rows());
  for (auto _ : state) {
    solver.Solve(ws.M, ws.J, f, ws.bias, vdot, lambda);
    benchmark::DoNotOptimize(lambda.data());
  }
  state.counters["N"] = n;
}

void DenseSolve(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const daedalus::SparseWorkspace sw = ChainState(n);
  daedalus::Workspace ws(sw.model());
  ws.SetState(sw.t, sw.q, sw.v);
  daedalus::EvaluateAll(&ws);
  daedalus::KktSolver solver(ws.model(),
                             daedalus::KktOptions{KktMethod::kSchur});
  daedalus::KktResult r;
  for (auto _ : state) {
    solver.Solve(ws, ws.bias, &r);
    benchmark::DoNotOptimize(r.lambda.data());
  }
  state.counters["N"] = n;
}

// What a careful user would write by hand with Eigen and CHOLMOD for the
// same M (diagonal for this chain) and J: S = J M^-1 J' by sparse products,
// CHOLMOD analysed once and refactorized per solve, then
// lambda = -S^-1 (b + J M^-1 f), vdot = M^-1 (f + J' lambda).
void HandWrittenCholmod(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const daedalus::SparseWorkspace ws = ChainState(n);
  const SparseMatrixD& J = ws.J;
  const Eigen::VectorXd minv = Eigen::VectorXd(ws.M.diagonal()).cwiseInverse();
  const Eigen::VectorXd f = ws.Bu - ws.h;
  const SparseMatrixD Jt = J.transpose();
  Eigen::CholmodSimplicialLLT<SparseMatrixD, Eigen::Lower> chol;
  {
    const SparseMatrixD S = J * minv.asDiagonal() * Jt;
    chol.analyzePattern(S);
  }
  Eigen::VectorXd z, lambda, vdot;
  for (auto _ : state) {
    const SparseMatrixD S = J * minv.asDiagonal() * Jt;
    chol.factorize(S);
    z = minv.cwiseProduct(f);
    lambda = -chol.solve(ws.bias + J * z);
    vdot = z + minv.cwiseProduct(Jt * lambda);
    benchmark::DoNotOptimize(vdot.data());
  }
  state.counters["N"] = n;
}

void SimulateOneSecond(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const daedalus::Problem p = daedalus::problems::ChainProblem(n);
  daedalus::SimulationOptions o = p.defaults;
  o.formulation = daedalus::Formulation::kBaumgarte;
  o.rtol = 1e-6;
  o.kkt.method = KktMethod::kSparseSchur;
  const Eigen::VectorXd params = p.model.default_parameters();
  daedalus::SimulationSummary s;
  for (auto _ : state) {
    s = daedalus::Simulate(p.model, p.initial(params), params, o);
    benchmark::DoNotOptimize(s.ok);
  }
  state.counters["steps"] = static_cast<double>(s.stats.steps);
  state.counters["drift"] = s.drift_position_max;
  if (!s.ok) state.SkipWithError(s.error.c_str());
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int n : {2, 5, 10, 30, 100, 300, 1000, 3000, 10000}) b->Arg(n);
}

BENCHMARK_CAPTURE(SparseSolve, schur, KktMethod::kSparseSchur)
    ->Apply(Sizes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(SparseSolve, sparse_lu, KktMethod::kSparseLu)
    ->Apply(Sizes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(SparseSolve, sparse_cholesky, KktMethod::kSparseCholesky)
    ->Apply(Sizes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(HandWrittenCholmod)->Apply(Sizes)->Unit(benchmark::kMicrosecond);
// Dense Schur is O(N^3): up to N = 300 (nv = 900).
BENCHMARK(DenseSolve)
    ->Arg(2)
    ->Arg(5)
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(SimulateOneSecond)
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Keeps the real time per iteration of every run for the summary.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      // "Family[/capture]/N[/iterations:1]": N is the first all-digit part.
      const std::string name = r.benchmark_name();
      std::string family;
      int n = -1;
      size_t start = 0;
      while (start <= name.size()) {
        const size_t end = std::min(name.find('/', start), name.size());
        const std::string part = name.substr(start, end - start);
        if (!part.empty() &&
            part.find_first_not_of("0123456789") == std::string::npos) {
          n = std::stoi(part);
          break;
        }
        if (!family.empty()) family += '/';
        family += part;
        start = end + 1;
      }
      if (n < 0) continue;
      // Seconds per iteration.
      times[family][n] = r.GetAdjustedRealTime() /
                         benchmark::GetTimeUnitMultiplier(r.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, std::map<int, double>> times;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Collector rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  auto& t = rep.times;
  const std::vector<std::string> solvers = {
      "SparseSolve/schur", "SparseSolve/sparse_lu",
      "SparseSolve/sparse_cholesky", "HandWrittenCholmod", "DenseSolve"};
  std::printf("\n| N | nv | nc |");
  for (const auto& s : solvers) std::printf(" %s [us] |", s.c_str());
  std::printf("\n|---|---|---|");
  for (size_t i = 0; i < solvers.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (int n : {2, 5, 10, 30, 100, 300, 1000, 3000, 10000}) {
    std::printf("| %d | %d | %d |", n, 3 * n, 2 * n);
    for (const auto& s : solvers) {
      if (t[s].count(n))
        std::printf(" %.2f |", 1e6 * t[s][n]);
      else
        std::printf(" - |");
    }
    std::printf("\n");
  }
  std::printf("\nfitted exponent p in time ~ N^p between N = 100 and 10000:\n");
  for (const auto& s : solvers) {
    if (t[s].count(100) && t[s].count(10000))
      std::printf("  %-28s p = %.3f\n", s.c_str(),
                  std::log(t[s][10000] / t[s][100]) / std::log(100.0));
  }
  if (t["SparseSolve/schur"].count(1000) && t["HandWrittenCholmod"].count(1000))
    std::printf("framework overhead at N = 1000: schur / hand-written = %.2f\n",
                t["SparseSolve/schur"][1000] / t["HandWrittenCholmod"][1000]);
  int crossover = -1;
  for (int n : {2, 5, 10, 30, 100, 300})
    if (crossover < 0 && t["DenseSolve"].count(n) &&
        t["SparseSolve/schur"].count(n) &&
        t["SparseSolve/schur"][n] < t["DenseSolve"][n])
      crossover = n;
  if (crossover > 0)
    std::printf(
        "dense/sparse crossover: sparse schur is faster from N = %d "
        "(nv = %d) on\n",
        crossover, 3 * crossover);
  else
    std::printf("dense/sparse crossover: dense faster at every measured N\n");
  for (const auto& [n, sec] : t["SimulateOneSecond"])
    std::printf(
        "1 s simulation, chain N = %d (Baumgarte, Adams, rtol 1e-6): "
        "%.3f s\n",
        n, sec);
  benchmark::Shutdown();
  return 0;
}
