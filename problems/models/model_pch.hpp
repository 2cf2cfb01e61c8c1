// The precompiled header of the catalogue's model files (models/
// CMakeLists.txt, DAEDALUS_PCH): Eigen, the standard library and the
// public headers every model includes, parsed once for all of them.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
