// The recursive algorithms (multibody_dynamics.hpp) instantiated for the
// scalars the library evaluates with, declared extern in the header.
#include "daedalus/multibody_dynamics.hpp"

namespace daedalus::mb {

DAEDALUS_TREE_DYNAMICS_INSTANCES(, double)
DAEDALUS_TREE_DYNAMICS_INSTANCES(, D1)

}  // namespace daedalus::mb
