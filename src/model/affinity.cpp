#include "model/affinity.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <sstream>

namespace daedalus::internal {
namespace {

// A probe's relative tolerance: an affine function's midpoint defect is
// round-off, a few ulps of the largest term (1e-15 relative for the
// catalogue's constraints); a term like c v^2 leaves c |v1 - v2|^2 / 4,
// of order c for the unit-size velocities probed. 1e-7 separates them by
// eight orders on either side.
constexpr double kAffineRelTol = 1e-7;
constexpr int kVelocityPairs = 3;
constexpr int kRandomStates = 3;

// A small deterministic generator (SplitMix64): the probes are the same on
// every build and run, so a refusal is reproducible.
class Probe {
 public:
  explicit Probe(std::uint64_t seed) : s_(seed) {}
  double Uniform(double lo, double hi) {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (static_cast<double>(z >> 11) * 0x1.0p-53);
  }
  Eigen::VectorXd Vector(Eigen::Index n, double lo, double hi) {
    Eigen::VectorXd x(n);
    for (Eigen::Index i = 0; i < n; ++i) x[i] = Uniform(lo, hi);
    return x;
  }

 private:
  std::uint64_t s_;
};

// Evaluates one constraint; false when it throws or is not finite there.
bool Evaluate(const ConstraintDecl& c,
              const Eigen::VectorXd& q,
              const Eigen::VectorXd& v,
              double t,
              const Eigen::VectorXd& p,
              Eigen::VectorXd* out) {
  try {
    out->setZero(c.rows);
    c.fn.f0(Point<double>{q, v, t, p}, *out);
  } catch (const std::exception&) {
    return false;
  }
  return out->size() == c.rows && out->allFinite();
}

}  // namespace

std::string NonAffineConstraint(const ModelData& d,
                                const Eigen::VectorXd& q,
                                double t,
                                const Eigen::VectorXd& p) {
  const Eigen::Index nv = static_cast<Eigen::Index>(d.coordinates.size());
  Probe rng(0x5EEDAFF1ull);
  for (const ConstraintDecl& c : d.constraints) {
    if (c.kind != ConstraintKind::kNonholonomic || !c.fn.f0) continue;
    for (int k = 0; k < kVelocityPairs; ++k) {
      const Eigen::VectorXd v1 = rng.Vector(nv, -1.0, 1.0);
      const Eigen::VectorXd v2 = rng.Vector(nv, -1.0, 1.0);
      const Eigen::VectorXd vm = 0.5 * (v1 + v2);
      Eigen::VectorXd g1, g2, gm, g0;
      if (!Evaluate(c, q, v1, t, p, &g1) || !Evaluate(c, q, v2, t, p, &g2) ||
          !Evaluate(c, q, vm, t, p, &gm) ||
          !Evaluate(c, q, Eigen::VectorXd::Zero(nv), t, p, &g0))
        continue;
      const Eigen::VectorXd defect = gm - 0.5 * (g1 + g2);
      const double scale =
          std::max({g1.cwiseAbs().maxCoeff(), g2.cwiseAbs().maxCoeff(),
                    gm.cwiseAbs().maxCoeff(), g0.cwiseAbs().maxCoeff(),
                    (g1 - g0).cwiseAbs().maxCoeff()});
      Eigen::Index row = 0;
      const double worst = defect.cwiseAbs().maxCoeff(&row);
      if (!(worst > kAffineRelTol * scale)) continue;
      std::ostringstream os;
      os.precision(6);
      os << "constraint '" << c.name << "'";
      if (c.rows > 1) os << " row " << row;
      os << " is declared nonholonomic but is not affine in the velocities: "
            "at q=(";
      for (Eigen::Index i = 0; i < q.size(); ++i)
        os << (i ? ", " : "") << d.coordinates[i] << "=" << q[i];
      os << "), t=" << t << " its value at the midpoint of two velocities "
         << "differs from the mean of its values there by " << worst
         << " (values " << g1[row] << " and " << g2[row] << ", midpoint "
         << gm[row] << "); write it as A(q, t) v + a(q, t) (a velocity "
         << "constraint is linear in v), or declare a position-level "
            "constraint with Holonomic or Moving";
      return os.str();
    }
  }
  return "";
}

std::string NonAffineConstraintAtRandomStates(const ModelData& d) {
  bool any = false;
  for (const ConstraintDecl& c : d.constraints)
    any = any || c.kind == ConstraintKind::kNonholonomic;
  if (!any) return "";
  const Eigen::Index nq = static_cast<Eigen::Index>(d.coordinates.size());
  Probe rng(0xA77171E5ull);
  for (int k = 0; k < kRandomStates; ++k) {
    const Eigen::VectorXd q = rng.Vector(nq, -1.0, 1.0);
    const double t = rng.Uniform(0.0, 1.0);
    const std::string why = NonAffineConstraint(d, q, t, d.parameter_defaults);
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace daedalus::internal
