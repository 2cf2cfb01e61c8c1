// Native kernels for a program that calls Simulate() itself (issue 40,
// item 5; include/daedalus/emit_kernels.hpp, docs/using_as_a_package.md
// "Native kernels without daedalus_add_problem"): EmitNativeKernels
// writes the same kernels as the problem executable's --emit-kernels pass.
#include "daedalus/emit_kernels.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "pendulum.hpp"

namespace daedalus {
namespace {
namespace emit_kernels_test {

std::set<std::string> Fingerprints(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::set<std::string> out;
  const std::regex fp("\\{(0x[0-9a-f]{16}ull), [0-9]+, [0-9]+, &kernel");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), fp);
       it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(EmitNativeKernels, WritesTheKernelsOfTheProblemsOwnPass) {
  const Problem p = problems::PendulumProblem();
  const std::string path = ::testing::TempDir() + "emit_kernels_pendulum.cpp";
  EXPECT_EQ(EmitNativeKernels(p.model, p.model.default_parameters(), p.defaults,
                              path),
            "");
  const std::set<std::string> mine = Fingerprints(path);
  EXPECT_GE(mine.size(), 4u);
  // The build's pass over the pendulum executable (problems/CMakeLists.txt).
  const std::set<std::string> build = Fingerprints(DAEDALUS_PENDULUM_KERNELS);
  ASSERT_FALSE(build.empty()) << DAEDALUS_PENDULUM_KERNELS;
  EXPECT_EQ(mine, build);
}

TEST(EmitNativeKernels, AnUnwritablePathIsReported) {
  const Problem p = problems::PendulumProblem();
  EXPECT_THAT(EmitNativeKernels(p.model, p.model.default_parameters(),
                                p.defaults, "/nonexistent/dir/k.cpp"),
              ::testing::HasSubstr("cannot write '/nonexistent/dir/k.cpp'"));
}

}  // namespace emit_kernels_test
}  // namespace
}  // namespace daedalus
