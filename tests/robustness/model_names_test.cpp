// Names a model declares become CSV columns, JSON keys, file names and the
// NAME of --param NAME=VALUE (issue 40, docs/output.md "Names"): a name
// that would break one of them is refused by ModelBuilder::Build() and by
// the multibody description, with the name shown and the fix. Before, a
// joint named "j,1" gave a CSV header of 23 fields over rows of 18, and a
// model named "../../evil" wrote a counterfactual outside its folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_files.hpp"
#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"

namespace daedalus {
namespace {
namespace model_names_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A pendulum whose names are given, built.
Model Pendulum(const std::string& model,
               const std::string& coord,
               const std::string& param,
               const std::string& constraint) {
  ModelBuilder b(model);
  b.Coordinates({coord, "y"});
  const Param m = b.Parameter(param, 1.0, ParamRange::Positive());
  b.KineticEnergy([m](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([m](const auto& x) { return 9.81 * x.p[m] * x.q[1]; });
  b.Holonomic(constraint, [](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - 1.0;
  });
  return std::move(b).Build();
}

std::string BuildError(const std::string& model,
                       const std::string& coord,
                       const std::string& param,
                       const std::string& constraint) {
  try {
    Pendulum(model, coord, param, constraint);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ModelNames, GoodNamesBuild) {
  EXPECT_EQ(Pendulum("arm-2.v1", "x", "m_1", "rod[0]:a").name(), "arm-2.v1");
}

TEST(ModelNames, ACommaInAConstraintNameIsRefusedNamingIt) {
  EXPECT_EQ(BuildError("p", "x", "m", "loop,1"),
            "model 'p': the constraint name \"loop,1\" holds a comma (it "
            "would split a CSV column); rename it with letters, digits, '_', "
            "'-', '.', ':' or brackets");
}

TEST(ModelNames, EveryBreakingCharacterIsRefusedInEveryKindOfName) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"a,b", "a comma"},
      {"a\"b", "a double quote"},
      {"a=b", "an equals sign"},
      {"a/b", "a slash"},
      {"a\\b", "a slash"},
      {"a\nb", "a control character"},
      {"a\tb", "a control character"}};
  for (const auto& [name, why] : bad) {
    EXPECT_THAT(BuildError("p", name, "m", "rod"),
                AllOf(HasSubstr("coordinate name"), HasSubstr(why)))
        << name;
    EXPECT_THAT(BuildError("p", "x", name, "rod"),
                AllOf(HasSubstr("parameter name"), HasSubstr(why)))
        << name;
    EXPECT_THAT(BuildError("p", "x", "m", name),
                AllOf(HasSubstr("constraint name"), HasSubstr(why)))
        << name;
    EXPECT_THAT(BuildError(name, "x", "m", "rod"),
                AllOf(HasSubstr("model name"), HasSubstr(why)))
        << name;
  }
  // Shown on one line: the newline escaped.
  EXPECT_THAT(BuildError("p", "x", "m", "a\nb"), HasSubstr("\"a\\nb\""));
}

TEST(ModelNames, EmptyNamesAndFolderNamesAreRefused) {
  EXPECT_EQ(BuildError("p", "", "m", "rod"),
            "model 'p': a coordinate has an empty name; give it a name");
  EXPECT_THAT(BuildError("p", "x", "m", ""),
              HasSubstr("a constraint has an empty name"));
  EXPECT_THAT(BuildError("", "x", "m", "rod"),
              HasSubstr("a model has an empty name"));
  for (const char* dots : {".", ".."})
    EXPECT_THAT(BuildError(dots, "x", "m", "rod"),
                HasSubstr("is a folder's name"));
  EXPECT_THAT(BuildError("../../evil", "x", "m", "rod"),
              AllOf(HasSubstr("the model name \"../../evil\" holds a slash"),
                    HasSubstr("file names")));
}

TEST(ModelNames, InputsQuadraturesEventsAndFunctionalsAreChecked) {
  auto with = [](auto declare) {
    ModelBuilder b("p");
    b.Coordinates({"x"});
    b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
    declare(&b);
    try {
      std::move(b).Build();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(with([](ModelBuilder* b) {
                b->Input(
                    "u=1",
                    [](const auto& x) {
                      VecX<Scalar<decltype(x)>> c(1);
                      c << 1.0;
                      return c;
                    },
                    [](const auto& x) { return Scalar<decltype(x)>(0.0); });
              }),
              HasSubstr("the input channel name \"u=1\" holds an equals"));
  EXPECT_THAT(with([](ModelBuilder* b) {
                b->Quadrature("q,1", [](const auto& x) { return x.q[0]; });
              }),
              HasSubstr("the quadrature name \"q,1\""));
  EXPECT_THAT(with([](ModelBuilder* b) {
                b->Event("hit/1", [](const auto& x) { return x.q[0]; });
              }),
              HasSubstr("the event name \"hit/1\""));
  EXPECT_THAT(with([](ModelBuilder* b) {
                b->RunningFunctional("J\"",
                                     [](const auto& x) { return x.q[0]; });
              }),
              HasSubstr("the functional name \"J\\\"\""));
}

TEST(ModelNames, MultibodyFramesBodiesAndJointsAreChecked) {
  mb::Multibody s(mb::Dimension::kPlanar);
  EXPECT_THAT(
      [&] {
        s.AddBody("link,1", mb::PlanarBody(mb::PExpr(1.0), mb::PVec(0.0, -0.5),
                                           mb::PExpr(0.1)));
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("the frame name \"link,1\" holds a comma")));
  const mb::BodyIndex b = s.AddBody(
      "link",
      mb::PlanarBody(mb::PExpr(1.0), mb::PVec(0.0, -0.5), mb::PExpr(0.1)));
  EXPECT_THAT(
      [&] {
        s.AddJoint("j=1", mb::Joint::Revolute(), s.world(), s.BodyFrame(b));
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("the joint name \"j=1\" holds an equals sign")));
}

// The second guard: every writer's paths come from the folder and a plain
// file name.
TEST(ModelNames, OutputBaseKeepsFilesInTheFolder) {
  EXPECT_EQ(internal::OutputBase("out", "pendulum"),
            (std::filesystem::path("out") / "pendulum").string());
  for (const char* name : {"../../evil", "..", ".", "", "a/b", "a\\b"})
    EXPECT_THAT([&] { internal::OutputBase("out", name); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("would not be in the output folder 'out'")))
        << name;
}

}  // namespace model_names_test
}  // namespace
}  // namespace daedalus
