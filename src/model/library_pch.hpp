// The precompiled header of the library's own files (src/CMakeLists.txt,
// DAEDALUS_PCH): Eigen, the standard library and the public headers most
// of them include, parsed once per build instead of once per file (2.3 to
// 3 s of clang -O0 per file, a third to nearly all of a small file's
// compile). Each file still includes what it uses; the clang preset builds
// with -DDAEDALUS_PCH=OFF to check that.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/dual.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"
