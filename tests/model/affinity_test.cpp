// Nonholonomic constraints must be affine in the velocities (issue 18):
// A(q, t) v + a(q, t) = 0. A constraint like v_x - v_y^2 was linearized at
// every evaluation and the run ended "ok" and wrong (final x 3.04 against
// 0.38 for the affine version); now Build() refuses it by probes at random
// states and Simulate() again at the initial state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {
namespace {
namespace affinity_test {

using ::testing::HasSubstr;
using ::testing::Not;

// A unit point in the plane with a velocity constraint `g`.
template <class G>
Model PlanarPoint(const std::string& name, G g) {
  ModelBuilder b(name);
  b.Coordinates({"x", "y"});
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  b.Nonholonomic("skate", g);
  return std::move(b).Build();
}

std::string BuildError(const std::function<Model()>& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Affinity, AQuadraticVelocityTermIsRefusedWithTheConstraintsName) {
  const std::string why = BuildError([] {
    return PlanarPoint("quadratic",
                       [](const auto& x) { return x.v[0] - x.v[1] * x.v[1]; });
  });
  EXPECT_THAT(why, HasSubstr("model 'quadratic'"));
  EXPECT_THAT(why, HasSubstr("constraint 'skate'"));
  EXPECT_THAT(why, HasSubstr("not affine in the velocities"));
  EXPECT_THAT(why, HasSubstr("A(q, t) v + a(q, t)"));
}

TEST(Affinity, NonlinearFunctionsOfVelocityAreRefused) {
  EXPECT_THAT(BuildError([] {
                return PlanarPoint(
                    "sine", [](const auto& x) { return sin(x.v[0]) + x.v[1]; });
              }),
              HasSubstr("not affine"));
  EXPECT_THAT(BuildError([] {
                return PlanarPoint("product", [](const auto& x) {
                  return x.v[0] * x.v[1] + x.q[0];
                });
              }),
              HasSubstr("not affine"));
}

// Coefficients that are any function of q and t, and an offset, are fine:
// the knife edge of the Chaplygin sleigh and a moving belt.
TEST(Affinity, AffineConstraintsWithNonlinearCoefficientsAreAccepted) {
  EXPECT_EQ(BuildError([] {
              return PlanarPoint("knife", [](const auto& x) {
                return -sin(x.q[0] * x.q[1]) * x.v[0] +
                       cos(x.q[0] + x.t) * x.v[1] + exp(x.q[1]) * x.t;
              });
            }),
            "");
  // Large and cancelling terms: round-off stays far below the tolerance.
  EXPECT_EQ(BuildError([] {
              return PlanarPoint("large", [](const auto& x) {
                return 1e8 * x.v[0] - 1e8 * x.v[0] + 1e8 * (x.v[1] + 1.0);
              });
            }),
            "");
}

// Defined only for x > 2: every probe at Build()'s random states in
// [-1, 1]^2 evaluates to NaN and is skipped; the run's initial state is
// where Simulate() catches it.
TEST(Affinity, AConstraintUndefinedAtRandomStatesIsCheckedAtTheStart) {
  Model m;
  ASSERT_EQ(BuildError([&] {
              m = PlanarPoint("domain", [](const auto& x) {
                return x.v[0] + sqrt(x.q[0] - 2.0) * x.v[1] * x.v[1];
              });
              return m;
            }),
            "");
  InitialState x0;
  x0.q = Eigen::Vector2d(3.0, 0.0);
  x0.v = Eigen::Vector2d(0.0, 1.0);
  SimulationOptions o;
  o.t_end = 0.1;
  try {
    Simulate(m, x0, m.default_parameters(), o);
    ADD_FAILURE() << "Simulate ran a non-affine velocity constraint";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("constraint 'skate'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("x=3"));
  }
}

}  // namespace affinity_test
}  // namespace
}  // namespace daedalus
