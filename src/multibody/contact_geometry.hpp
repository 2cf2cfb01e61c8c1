// Contact between shapes of a multibody description (multibody.hpp,
// Multibody::AddContact; docs/contact.md, "Contact geometry"): the gap and
// tangential-velocity constraints AddTo declares for each contact point.
#pragma once

#include <memory>

#include "daedalus/multibody.hpp"

namespace daedalus::mb::internal {

/// Declares, for every contact point of `tree`, its gap (a unilateral
/// holonomic constraint with the point's ContactLaw) and, with friction,
/// its tangential velocities (a Nonholonomic constraint, 1 or 2 rows).
void DeclareGeometryContacts(const std::shared_ptr<const MbTree>& tree,
                             ModelBuilder* builder);

}  // namespace daedalus::mb::internal
