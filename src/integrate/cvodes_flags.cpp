// CVODES's return flags in words (cvodes_flags.hpp).
#include "integrate/cvodes_flags.hpp"

#include <cvodes/cvodes.h>

#include <cstdlib>
#include <memory>

#include "integrate/step_budget.hpp"

namespace daedalus::internal {

std::string CvodesFlagName(int flag) {
  switch (flag) {
    case CV_PROJ_MEM_NULL:
      return "CV_PROJ_MEM_NULL";
    case CV_PROJFUNC_FAIL:
      return "CV_PROJFUNC_FAIL";
    case CV_REPTD_PROJFUNC_ERR:
      return "CV_REPTD_PROJFUNC_ERR";
    default: {
      // A malloc'd string we must free.
      std::unique_ptr<char, decltype(&std::free)> name(
          CVodeGetReturnFlagName(flag), &std::free);
      return name ? name.get() : "?";
    }
  }
}

std::string CvodesHint(int flag, long max_steps) {
  switch (flag) {
    case CV_PROJFUNC_FAIL:
    case CV_REPTD_PROJFUNC_ERR:
      return "the projection onto the constraints failed; see the message "
             "above";
    case CV_TOO_MUCH_WORK:
      return StepBudgetHint(max_steps);
    case CV_TOO_MUCH_ACC:
      return "the tolerances are below what double precision allows; loosen "
             "--rtol/--atol";
    case CV_ERR_FAILURE:
    case CV_CONV_FAILURE:
      return "tighten --rtol/--atol, try another --formulation (projection), "
             "or check for a singular configuration near this time";
    case CV_RHSFUNC_FAIL:
    case CV_FIRST_RHSFUNC_ERR:
    case CV_REPTD_RHSFUNC_ERR:
    case CV_UNREC_RHSFUNC_ERR:
      return "a model function failed; see the message above";
    default:
      return "check the model and the options";
  }
}

}  // namespace daedalus::internal
