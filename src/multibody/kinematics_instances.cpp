// The multibody kinematics (multibody_kinematics.hpp) instantiated for the
// scalars the library evaluates model functions with, declared extern in
// the header.
#include "daedalus/multibody_kinematics.hpp"

namespace daedalus::mb {

DAEDALUS_KINEMATICS_ALL_INSTANCES()

}  // namespace daedalus::mb
