// CVODES's return flags in words, for the messages of the forward and
// adjoint CVODES adapters.
#pragma once

#include <string>

namespace daedalus::internal {

/// The flag's name. CVodeGetReturnFlagName of SUNDIALS 6.4 names the
/// projection flags "NONE"; those are named here.
std::string CvodesFlagName(int flag);

/// What to try after CVode failed with `flag` (`max_steps`: the run's step
/// budget, quoted by the hint for CV_TOO_MUCH_WORK).
std::string CvodesHint(int flag, long max_steps);

}  // namespace daedalus::internal
