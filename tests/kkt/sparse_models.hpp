// Small models shared by the sparse KKT and sparse simulation tests
// (tests/kkt/sparse_test.cpp, sparse_resolve_test.cpp,
// tests/integrate/sparse_simulation_test.cpp).
#pragma once

#include <cmath>
#include <string>
#include <utility>

#include "chain.hpp"
#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"
#include "model/invoke.hpp"

namespace daedalus::testing {

// A sled (knife edge): (x, y, theta) with the nonholonomic constraint
// -sin(theta) vx + cos(theta) vy = 0, declared on its three coordinates,
// and a moving support pulling a second point mass (z) up at 0.3 m/s.
inline Model SledAndSupport() {
  ModelBuilder b("sled");
  b.Coordinates({"x", "y", "theta", "z"});
  b.KineticEnergyTerm(Touches{{0, 1, 2}}, [](const auto& s) {
    return 0.5 * 2.0 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]) +
           0.5 * 0.3 * s.v[2] * s.v[2];
  });
  // A velocity-and-position dependent term (a bead on a spinning rod) so
  // that M depends on q and the inertial forces are nonzero.
  b.KineticEnergyTerm(Touches{{2, 3}}, [](const auto& s) {
    return 0.5 * (1.0 + s.q[3] * s.q[3]) * s.v[3] * s.v[3] +
           0.5 * s.q[3] * s.q[3] * s.v[2] * s.v[2];
  });
  b.PotentialEnergyTerm(Touches{{3}},
                        [](const auto& s) { return 9.81 * s.q[3]; });
  b.PotentialEnergyTerm(Touches{{0, 2}}, [](const auto& s) {
    return 0.5 * s.q[0] * s.q[0] + cos(s.q[2]);
  });
  b.Nonholonomic("blade", Touches{{0, 1, 2}}, [](const auto& s) {
    return -sin(s.q[2]) * s.v[0] + cos(s.q[2]) * s.v[1];
  });
  b.Moving("lift", Touches{{3}},
           [](const auto& s) { return s.q[3] - (0.3 * s.t + 0.1); });
  return std::move(b).Build();
}

// The chain plus a second copy of one joint ("declared twice").
inline Model ChainWithDuplicateJoint(int n, int dup) {
  Problem p = problems::ChainProblem(n);
  ModelBuilder b("chain_dup");
  // Rebuild the chain's declarations and add the duplicate.
  std::vector<std::string> names = p.model.coordinate_names();
  b.Coordinates(names);
  const auto& d = p.model.data();
  for (size_t i = 0; i < d.parameter_names.size(); ++i)
    b.Parameter(d.parameter_names[i], d.parameter_defaults[i]);
  for (const auto& t : d.kinetic_terms) {
    const auto fn = t.fn;
    b.KineticEnergyTerm(Touches{t.coords}, [fn](const auto& s) {
      return internal::Invoke(fn, s);
    });
  }
  for (const auto& t : d.potential_terms) {
    const auto fn = t.fn;
    b.PotentialEnergyTerm(Touches{t.coords}, [fn](const auto& s) {
      return internal::Invoke(fn, s);
    });
  }
  auto add = [&](const internal::ConstraintDecl& c, const std::string& name) {
    const auto fn = c.fn;
    b.Holonomic(
        name, Touches{c.coords},
        [fn](const auto& s) {
          using S = Scalar<decltype(s)>;
          VecX<S> out;
          internal::Invoke(fn, s, out);
          return out;
        },
        c.rows);
  };
  for (const auto& c : d.constraints) add(c, c.name);
  add(d.constraints[dup],
      std::string(d.constraints[dup].name).append("_again"));
  return std::move(b).Build();
}

// Parallelogram: point masses P1 = (x1, y1) and P2 = (x2, y2) on unit
// cranks pivoted at O1 = (0, 0) and O2 = (1, 0), joined by a unit coupler;
// with `extra`, a third unit crank from O3 = (2, 0) to P3 = 2 P2 - P1 (the
// coupler extended), which is redundant on the parallelogram's motion.
inline Model Parallelogram(bool extra) {
  ModelBuilder b(extra ? "parallelogram_extra" : "parallelogram");
  b.Coordinates({"x1", "y1", "x2", "y2"});
  b.KineticEnergyTerm(Touches{{0, 1}}, [](const auto& s) {
    return 0.5 * 1.0 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]);
  });
  b.KineticEnergyTerm(Touches{{2, 3}}, [](const auto& s) {
    return 0.5 * 2.0 * (s.v[2] * s.v[2] + s.v[3] * s.v[3]);
  });
  b.PotentialEnergyTerm(Touches{{1, 3}}, [](const auto& s) {
    return 9.81 * (1.0 * s.q[1] + 2.0 * s.q[3]);
  });
  b.Holonomic("crank1", Touches{{0, 1}}, [](const auto& s) {
    return s.q[0] * s.q[0] + s.q[1] * s.q[1] - 1.0;
  });
  b.Holonomic("crank2", Touches{{2, 3}}, [](const auto& s) {
    return (s.q[2] - 1.0) * (s.q[2] - 1.0) + s.q[3] * s.q[3] - 1.0;
  });
  b.Holonomic("coupler", Touches{{0, 1, 2, 3}}, [](const auto& s) {
    return (s.q[2] - s.q[0]) * (s.q[2] - s.q[0]) +
           (s.q[3] - s.q[1]) * (s.q[3] - s.q[1]) - 1.0;
  });
  if (extra)
    b.Holonomic("crank3", Touches{{0, 1, 2, 3}}, [](const auto& s) {
      const auto x3 = 2.0 * s.q[2] - s.q[0] - 2.0, y3 = 2.0 * s.q[3] - s.q[1];
      return x3 * x3 + y3 * y3 - 1.0;
    });
  return std::move(b).Build();
}

inline InitialState ParallelogramState(double angle, double rate) {
  InitialState s;
  const double c = std::cos(angle), sn = std::sin(angle);
  s.q = Eigen::Vector4d(c, sn, 1.0 + c, sn);
  s.v = rate * Eigen::Vector4d(-sn, c, -sn, c);
  return s;
}

}  // namespace daedalus::testing
