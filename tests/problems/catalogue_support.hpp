// Helpers shared by the problem-catalogue tests: a sample collector, the
// complete elliptic integral of the first kind, and zero crossings located
// on the cubic Hermite interpolant of the samples.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <functional>
#include <vector>

#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::testing {

/// Keeps every sample of a run.
struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

/// A run of `problem` with `options` and `params` (its defaults when
/// empty), collecting the samples.
struct Run {
  SimulationSummary summary;
  std::vector<Sample> samples;
};
inline Run RunProblem(const Problem& problem,
                      const SimulationOptions& options,
                      Eigen::VectorXd params = Eigen::VectorXd()) {
  if (params.size() == 0) params = problem.model.default_parameters();
  Collector c;
  Run r;
  r.summary =
      Simulate(problem.model, problem.initial(params), params, options, &c);
  r.samples = std::move(c.samples);
  return r;
}

/// Complete elliptic integral of the first kind K(k) (modulus k < 1) by the
/// arithmetic-geometric mean: K = pi / (2 AGM(1, sqrt(1 - k^2)))
/// (Abramowitz and Stegun 17.6). The AGM converges quadratically; the loop
/// stops when the two means agree to round-off.
inline double EllipticK(double k) {
  double a = 1.0, b = std::sqrt(1.0 - k * k);
  for (int i = 0; i < 60 && std::abs(a - b) > 1e-16 * a; ++i) {
    const double an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return M_PI / (2.0 * a);
}

/// Times where f crosses zero, located on the cubic Hermite interpolant of
/// (f, f') between consecutive samples. With sample spacing h the
/// interpolant's error is h^4 |f''''| / 384, far below the integration
/// error for the spacings used here.
inline std::vector<double> ZeroCrossings(
    const std::vector<Sample>& samples,
    const std::function<double(const Sample&)>& f,
    const std::function<double(const Sample&)>& fdot) {
  std::vector<double> roots;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    const double t0 = samples[i].t, t1 = samples[i + 1].t, h = t1 - t0;
    const double f0 = f(samples[i]), f1 = f(samples[i + 1]);
    if (f0 == 0.0) roots.push_back(t0);
    if (!(f0 * f1 < 0.0)) continue;
    const double d0 = fdot(samples[i]) * h, d1 = fdot(samples[i + 1]) * h;
    auto hermite = [&](double s) {
      const double s2 = s * s, s3 = s2 * s;
      return (2 * s3 - 3 * s2 + 1) * f0 + (s3 - 2 * s2 + s) * d0 +
             (-2 * s3 + 3 * s2) * f1 + (s3 - s2) * d1;
    };
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 100; ++it) {  // bisection to round-off
      const double mid = 0.5 * (lo + hi);
      if ((hermite(mid) < 0.0) == (f0 < 0.0))
        lo = mid;
      else
        hi = mid;
    }
    roots.push_back(t0 + 0.5 * (lo + hi) * h);
  }
  return roots;
}

}  // namespace daedalus::testing
