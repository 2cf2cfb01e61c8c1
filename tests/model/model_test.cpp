// The model description (src/model/): sizes, the stacked constraint rows
// and their names, parameters, and the builder's refusal of inconsistent
// declarations, with messages that name what is wrong.
#include "daedalus/model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daedalus/simulate.hpp"
#include "support/seed_models.hpp"

namespace daedalus {
namespace {
namespace model_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A planar point with a two-row pin, a one-row moving guide and a
// nonholonomic blade: the rows stack in declaration order.
ModelBuilder Pinned() {
  ModelBuilder b("pinned");
  b.Coordinates({"x", "y", "z"});
  b.Parameter("m", 2.0);
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.Holonomic(
      "pin",
      [](const auto& x) {
        Eigen::Matrix<Scalar<decltype(x)>, 2, 1> r(x.q[0], x.q[1]);
        return r;
      },
      2);
  b.Moving("guide", [](const auto& x) { return x.q[2] - x.t; });
  b.Nonholonomic("blade", [](const auto& x) { return x.v[0] - x.v[1]; });
  return b;
}

TEST(Model, StacksConstraintRowsInDeclarationOrder) {
  const Model m = Pinned().Build();
  EXPECT_EQ(m.nq(), 3);
  EXPECT_EQ(m.nv(), 3);
  EXPECT_EQ(m.nc(), 4);
  EXPECT_EQ(m.num_constraints(), 3);
  EXPECT_EQ(m.constraint_row(0), 0);
  EXPECT_EQ(m.constraint_row(1), 2);
  EXPECT_EQ(m.constraint_row(2), 3);
  EXPECT_EQ(m.RowName(0), "pin[0]");
  EXPECT_EQ(m.RowName(1), "pin[1]");
  EXPECT_EQ(m.RowName(2), "guide");
  EXPECT_EQ(m.RowName(3), "blade");
  EXPECT_TRUE(m.has_moving_constraints());
  EXPECT_TRUE(m.has_nonholonomic_constraints());
  EXPECT_EQ(m.constraints()[2].kind, ConstraintKind::kNonholonomic);
  EXPECT_EQ(m.ParameterIndex("m"), 0);
  EXPECT_EQ(m.default_parameters()[0], 2.0);
}

TEST(Model, UnknownParameterListsValidNames) {
  const Model m = testing::SeedMovingSupport();
  EXPECT_THAT([&] { m.ParameterIndex("mass"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("valid parameters are: m g")));
}

// Parameter ranges (issue 18): --param l=-1 and a chain of length -1 ran
// "ok"; m = -1 failed later with a message about the mass matrix.
TEST(Model, ParameterRangesAreDeclaredDescribedAndChecked) {
  EXPECT_EQ(ParamRange::Positive().Describe(), "> 0");
  EXPECT_EQ(ParamRange::NonNegative().Describe(), ">= 0");
  EXPECT_EQ(ParamRange::Between(-1.0, 2.5).Describe(), "in [-1, 2.5]");
  EXPECT_EQ(ParamRange{}.Describe(), "any value");
  EXPECT_FALSE(ParamRange::Positive().Contains(0.0));
  EXPECT_TRUE(ParamRange::Positive().Contains(1e-300));
  EXPECT_TRUE(ParamRange::NonNegative().Contains(0.0));
  EXPECT_FALSE(ParamRange::NonNegative().Contains(-1e-300));
  EXPECT_TRUE(ParamRange::Between(-1.0, 2.5).Contains(2.5));
  EXPECT_FALSE(ParamRange::Between(-1.0, 2.5).Contains(2.5000000000000004));

  ModelBuilder b("ranged");
  b.Coordinates({"x"});
  const Param m = b.Parameter("m", 2.0, ParamRange::Positive());
  b.Parameter("c", 0.0, ParamRange::NonNegative());
  b.Parameter("g", -9.81);
  b.KineticEnergy(
      [m](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  const Model model = std::move(b).Build();
  EXPECT_EQ(model.parameter_ranges().size(), 3u);
  EXPECT_EQ(model.ParameterRangeError(model.default_parameters()), "");
  Eigen::VectorXd p = model.default_parameters();
  p[0] = -1.0;
  EXPECT_EQ(model.ParameterRangeError(p),
            "parameter 'm' = -1 is outside its range: model 'ranged' "
            "declares it > 0");
  p[0] = 1.0;
  p[1] = -0.5;
  EXPECT_THAT(model.ParameterRangeError(p),
              ::testing::HasSubstr("'c' = -0.5 is outside its range"));
  p[1] = 0.0;
  p[2] = 1e300;  // any value
  EXPECT_EQ(model.ParameterRangeError(p), "");
  // Simulate refuses such values before it starts.
  p[0] = 0.0;
  EXPECT_THROW(
      Simulate(model, {Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1)}, p,
               SimulationOptions{}),
      std::invalid_argument);

  // A default outside its own range is a declaration error.
  ModelBuilder bad("bad");
  EXPECT_THAT([&] { bad.Parameter("l", -1.0, ParamRange::Positive()); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("'l' has default -1 outside its "
                                       "range > 0")));
}

TEST(Model, ModelWithoutEnergyIsRejected) {
  ModelBuilder b("empty");
  b.Coordinates({"x"});
  EXPECT_THAT(
      [&] { std::move(b).Build(); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("no kinetic energy")));
}

TEST(Model, InconsistentDeclarationsNameWhatIsWrong) {
  {
    ModelBuilder b = Pinned();
    EXPECT_THAT([&] { b.Parameter("m", 1.0); },
                ThrowsMessage<std::invalid_argument>(
                    HasSubstr("parameter 'm' declared twice")));
  }
  {
    ModelBuilder b = Pinned();
    b.Unilateral("blade");
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(
                    HasSubstr("'blade' is nonholonomic and cannot be "
                              "unilateral")));
  }
  {
    ModelBuilder b = Pinned();
    b.Unilateral("wall");
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(
                    HasSubstr("names constraint 'wall', which is not "
                              "declared")));
  }
  {
    ModelBuilder b = Pinned();
    b.FrictionCone("cone", "guide", "blade", -0.5);
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(
                    HasSubstr("friction coefficient mu = -0.5")));
  }
  {
    ModelBuilder b("touch");
    b.Coordinates({"x", "y"});
    b.KineticEnergyTerm(Touches{{0, 2}},
                        [](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(HasSubstr(
                    "touches coordinate 2, the model has 2 (valid indices "
                    "0..1)")));
  }
  // A second function for the same role would replace the first without a
  // word; it is refused and says how to combine them.
  {
    ModelBuilder b = Pinned();
    EXPECT_THAT(
        [&] {
          b.MassMatrix([](const auto& x) {
            using S = Scalar<decltype(x)>;
            return MatX<S>::Identity(3, 3).eval();
          });
        },
        ThrowsMessage<std::invalid_argument>(
            HasSubstr("model 'pinned': the kinetic energy (KineticEnergy or "
                      "MassMatrix) was already given")));
    b.Damping([](const auto& x) {
      using S = Scalar<decltype(x)>;
      return MatX<S>::Identity(3, 3).eval();
    });
    EXPECT_THAT(
        [&] {
          b.Damping([](const auto& x) {
            using S = Scalar<decltype(x)>;
            return MatX<S>::Zero(3, 3).eval();
          });
        },
        ThrowsMessage<std::invalid_argument>(
            HasSubstr("the damping matrix was already given; a second call "
                      "would replace the first. Return the sum")));
    b.OtherLoads([](const auto& x) {
      using S = Scalar<decltype(x)>;
      return VecX<S>::Zero(3).eval();
    });
    EXPECT_THAT(
        [&] {
          b.OtherLoads([](const auto& x) {
            using S = Scalar<decltype(x)>;
            return VecX<S>::Zero(3).eval();
          });
        },
        ThrowsMessage<std::invalid_argument>(
            HasSubstr("the other-loads function Q_r was already given")));
    b.PotentialEnergy([](const auto& x) { return x.q[2]; });
    EXPECT_THAT(
        [&] { b.PotentialEnergy([](const auto& x) { return x.q[0]; }); },
        ThrowsMessage<std::invalid_argument>(
            HasSubstr("or as a sum of PotentialEnergyTerm calls")));
  }
}

}  // namespace model_test
}  // namespace
}  // namespace daedalus
