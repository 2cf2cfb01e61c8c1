// The precompiled header of the test binaries (tests/CMakeLists.txt,
// DAEDALUS_TEST_PCH): the external and Daedalus headers most test files
// include, parsed once per build instead of once per test file (4.7 s of
// g++ -O3 and 3.7 s of clang -O0 per file for these alone; about 65 test
// files). Every test file still includes what it uses; a build with
// -DDAEDALUS_TEST_PCH=OFF checks that.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/model.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"
