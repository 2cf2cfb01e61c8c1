// --max-steps is a budget of the whole run (SimulationOptions::max_steps):
// the steps the summary counts, whatever the output step. CVODES and IDAS
// take a limit per call (CVodeSetMaxNumSteps, IDASetMaxNumSteps), so the
// adapters hand them what is left before each output interval.
#pragma once

#include <sstream>
#include <string>

namespace daedalus::internal {

/// The steps left of a budget of `max_steps` after `taken`: > 0, or 0 when
/// the budget is spent (then StepBudgetSpent() is the run's error).
inline long StepsLeft(long max_steps, long taken) {
  return taken < max_steps ? max_steps - taken : 0;
}

/// The error of a run that spent its budget by time t.
inline std::string StepBudgetSpent(long max_steps, double t) {
  std::ostringstream os;
  os << "the run took its budget of --max-steps " << max_steps
     << " steps (the steps of the whole run, as the summary counts them) by "
        "t = "
     << t << "; raise --max-steps, loosen --rtol/--atol, or shorten --t-end";
  return os.str();
}

/// The hint for a CVODES or IDAS TOO_MUCH_WORK return.
inline std::string StepBudgetHint(long max_steps) {
  return "the run took its budget of --max-steps " + std::to_string(max_steps) +
         " steps (the steps of the whole run, as the summary counts them): "
         "raise --max-steps, loosen --rtol/--atol, or shorten --t-end";
}

}  // namespace daedalus::internal
