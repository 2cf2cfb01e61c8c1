// Shared test utilities: matrix comparison with a readable failure, named
// tolerances, seeded random states.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"

// Skips the calling test in the sanitizer build (-O1, the library
// instrumented with ASan and UBSan: 3 to 15 times slower than release on
// the library's paths, more on dual numbers) when all it adds there is more of
// the same integration: long sweeps over tolerances or problems whose code
// paths shorter tests in that build already run. Their numbers are checked
// by the release build, which runs every test.
#ifdef DAEDALUS_SANITIZER_BUILD
#define DAEDALUS_RELEASE_BUILD_ONLY(why) \
  GTEST_SKIP() << "run by the release build only: " << why
#else
#define DAEDALUS_RELEASE_BUILD_ONLY(why) static_cast<void>(0)
#endif

namespace daedalus::testing {

/// Round-off for quantities of order one after a few dozen operations.
constexpr double kRoundOff = 64 * std::numeric_limits<double>::epsilon();

/// |a - b| <= tol * max(1, |b|) elementwise.
inline ::testing::AssertionResult NearRel(const Eigen::MatrixXd& a,
                                          const Eigen::MatrixXd& b,
                                          double tol) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    return ::testing::AssertionFailure()
           << "size " << a.rows() << "x" << a.cols() << " vs " << b.rows()
           << "x" << b.cols();
  }
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const double scale = std::max(1.0, std::abs(b(i, j)));
      if (!(std::abs(a(i, j) - b(i, j)) <= tol * scale)) {
        std::ostringstream os;
        os.precision(17);
        os << "entry (" << i << "," << j << "): " << a(i, j) << " vs "
           << b(i, j) << " (diff " << a(i, j) - b(i, j) << ", tol " << tol
           << ")\nactual:\n"
           << a << "\nexpected:\n"
           << b;
        return ::testing::AssertionFailure() << os.str();
      }
    }
  }
  return ::testing::AssertionSuccess();
}

/// A state of a model's dimensions: time t0 + 0.1 seed, coordinates,
/// velocities and accelerations uniform in [-1, 1] from std::mt19937(seed).
struct RandomState {
  double t;
  Eigen::VectorXd q, v, vdot;
  RandomState(int nq, int nv, unsigned seed, double t0) : t(t0 + 0.1 * seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    q.resize(nq);
    v.resize(nv);
    vdot.resize(nv);
    for (int i = 0; i < nq; ++i) q[i] = U(rng);
    for (int i = 0; i < nv; ++i) v[i] = U(rng), vdot[i] = U(rng);
  }
};

/// Uniform random vector in [lo, hi]^n from a seeded generator.
inline Eigen::VectorXd RandomVector(std::mt19937& gen,
                                    int n,
                                    double lo,
                                    double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x[i] = d(gen);
  return x;
}

/// An integrator, a formulation and (IDAS) the Newton matrix's linear
/// solver, for tests parameterized over them.
struct Solver {
  Integrator integrator;
  Formulation formulation;
  LinearSolver linear_solver = LinearSolver::kDense;
  void ApplyTo(SimulationOptions* o) const {
    o->integrator = integrator;
    o->formulation = formulation;
    o->linear_solver = linear_solver;
  }
};
/// "cvodes_bdf_baumgarte", "idas_ggl_klu": the test-name suffix of a
/// Solver parameter.
inline std::string SolverName(const ::testing::TestParamInfo<Solver>& info) {
  std::string name = std::string(ToString(info.param.integrator)) + "_" +
                     ToString(info.param.formulation);
  if (info.param.linear_solver != LinearSolver::kDense)
    name += std::string("_") + ToString(info.param.linear_solver);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

/// An observer that keeps every sample of a run.
struct Keep : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

}  // namespace daedalus::testing
