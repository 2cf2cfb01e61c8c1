// The model description (src/model/): sizes, the stacked constraint rows
// and their names, parameters, and the builder's refusal of inconsistent
// declarations, with messages that name what is wrong.
#include "daedalus/model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/seed_models.hpp"

namespace daedalus {
namespace {

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
}

}  // namespace
}  // namespace daedalus
