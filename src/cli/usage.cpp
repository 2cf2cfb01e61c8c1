// The problem executables' --help text (run.hpp): every common flag with its
// default, then the problem's own options, coordinates, parameters and
// input channels.
#include <sstream>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus {

std::string Usage(const Problem& problem, const std::string& program) {
  const Model& m = problem.model;
  const SimulationOptions& d = problem.defaults;
  std::ostringstream os;
  os << "usage: " << program << " [options]\n\n";
  if (!problem.description.empty()) os << problem.description << "\n\n";
  os << "options:\n"
     << "  --t-end T            final time [s] (default " << d.t_end << ")\n"
     << "  --rtol R             relative tolerance (default " << d.rtol << ")\n"
     << "  --atol A             absolute tolerance (default " << d.atol << ")\n"
     << "  --output-step DT     output spacing [s] (default " << d.output_step
     << ")\n"
     << "  --output-dir DIR     where <name>.csv and <name>.json go (default "
        ".)\n"
     << "  --param NAME=VALUE   set a model parameter (repeatable)\n"
     << "  --q0 COORD=VALUE     override a coordinate of the initial state\n"
     << "  --v0 COORD=VALUE     ... or a velocity (repeatable; the start is\n"
     << "                       then made consistent with the constraints)\n"
     << "  --formulation F      unstabilized | baumgarte | projection | ggl |\n"
     << "                       index3 (default " << ToString(d.formulation)
     << ")\n"
     << "  --integrator I       cvodes-bdf | cvodes-adams | idas |\n"
     << "                       stormer-verlet | symplectic-euler | rattle |\n"
     << "                       generalized-alpha | hht | moreau-jean\n"
     << "                       (default " << ToString(d.integrator) << ")\n"
     << "  --baumgarte-alpha A  velocity gain [1/s] (default "
     << d.baumgarte_alpha << ")\n"
     << "  --baumgarte-beta B   position gain [1/s] (default "
     << d.baumgarte_beta << ")\n"
     << "  --kkt M              auto | dense | full-lu | schur | sparse-lu |\n"
     << "                       sparse-cholesky | qr (default "
     << ToString(d.kkt.method) << ")\n"
     << "  --drift-tol D        largest accepted drift (0: off; default "
     << d.drift_tol << ")\n"
     << "  --drift-action A     fail | escalate (Baumgarte -> projection)\n"
     << "  --contact C          auto | monitor | event-driven: unilateral\n"
     << "                       rows as watched equalities or contacts\n"
     << "                       (docs/contact.md; default "
     << ToString(d.contact.mode) << ")\n"
     << "  --zeno-velocity V    contacts striking slower than V close for\n"
     << "                       good too (default " << d.contact.zeno_velocity
     << "; 0: off); a\n"
     << "                       rebound the integrator cannot resolve\n"
     << "                       (u+^2 / (2 |a|) within atol + rtol |q|)\n"
     << "                       always closes (docs/contact.md)\n"
     << "  --gap-tolerance G    a gap below G touches (default "
     << d.contact.gap_tolerance << ")\n"
     << "  --project-penetration  project an initial penetration instead\n"
     << "                       of refusing the run\n"
     << "  --allow-redundant    dependent constraint rows (a box resting on\n"
     << "                       four corners) get minimum-norm multipliers\n"
     << "                       instead of ending the run (dense KKT)\n"
     << "  --no-joint-limits    run without the joints' position limits\n"
     << "                       (multibody JointLimits, URDF <limit>, MJCF\n"
     << "                       range: contacts by default; docs/contact.md,\n"
     << "                       \"Joint limits\"): the joints are free; this\n"
     << "                       model has " << NumJointLimitRows(m)
     << " limit rows\n"
     << "  --multiplier-atol A  IDAS: a fixed Newton tolerance of the\n"
     << "                       multipliers (default 0: scaled by the step,\n"
     << "                       docs/formulations.md)\n"
     << "  --linear-solver S    dense | klu: Newton systems (default "
     << ToString(d.linear_solver) << ")\n"
     << "  --jacobian J         ad (exact) | dq (difference quotients)\n"
     << "  --evaluator E        compiled (default: recorded programs, as\n"
     << "                       native kernels when the build generated\n"
     << "                       them) | interpreted (the same programs,\n"
     << "                       interpreted) | ad (dual numbers)\n"
     << "  --sens P[,P...]      sensitivities w.r.t. parameters or q0[i],\n"
     << "                       v0[i] (forward unless --sens-method)\n"
     << "  --sens-method M      forward | adjoint\n"
     << "  --functional G       a declared functional, reported and (with\n"
     << "                       --sens) differentiated: G at the end, G@E\n"
     << "                       at event E's first occurrence, G@E#K at\n"
     << "                       its K-th (needed by --sens-method adjoint)\n"
     << "  --sens-dq            SUNDIALS difference quotients for the\n"
     << "                       sensitivity residuals (default exact AD)\n"
     << "  --sens-corrector C   auto (staggered on IDAS, simultaneous on\n"
     << "                       CVODES) | simultaneous | staggered\n"
     << "  --sens-staggered     the same as --sens-corrector staggered\n"
     << "  --sens-no-error-control  leave sensitivities out of the error "
        "test\n"
     << "  --step H             fixed step [s] of stormer-verlet |\n"
     << "                       symplectic-euler | rattle (--integrator);\n"
     << "                       generalized-alpha | hht: fixed step instead\n"
     << "                       of step-size control; moreau-jean: its\n"
     << "                       time step (required; first order)\n"
     << "  --theta T            moreau-jean: q+ = q + h (T v+ + (1 - T) v-),\n"
     << "                       T in [0.5, 1] (default " << d.moreau_jean.theta
     << ")\n"
     << "  --pgs-tol E          moreau-jean: the contact solver's (projected\n"
     << "                       Gauss-Seidel) relative tolerance (default "
     << d.moreau_jean.tolerance << ")\n"
     << "  --pgs-max-iter N     moreau-jean: its sweeps per step before the\n"
     << "                       run ends as stalled (default "
     << d.moreau_jean.max_iterations << ")\n"
     << "  --no-broad-phase     moreau-jean: evaluate every contact row at\n"
     << "                       every step (default: only the contacts\n"
     << "                       that can close within the step)\n"
     << "  --rho-inf R          generalized-alpha | hht: spectral radius at\n"
     << "                       infinite frequency, [0, 1] ([0.5, 1] for\n"
     << "                       hht; default " << d.rho_inf
     << ", 1: no damping)\n"
     << "  --max-steps N        the run's budget of integrator steps (the\n"
     << "                       summary's count; default " << d.max_steps
     << ")\n"
     << "  --max-samples N      largest output grid accepted (default "
     << d.max_samples << ")\n"
     << "  --nonlin-conv-coef C cvodes-* | idas: corrector convergence\n"
     << "                       coefficient, a fraction of the local error\n"
     << "                       tolerance (default 0: the integrator's,\n"
     << "                       CVODES 0.1, IDAS 0.33; docs/output.md)\n"
     << "  --counterfactual C   repeatable; C is one of (docs/analysis.md)\n"
     << "                       ztcf[:CH[+CH..]]@T   branch at T with the\n"
     << "                         channels removed (all if none), compared\n"
     << "                         with the original future\n"
     << "                       pointwise-ztcf[:CH..]@T|all  zero-input\n"
     << "                         accelerations at achieved states\n"
     << "                       zvcf@T|all           accelerations with\n"
     << "                         zero velocity and input (undefined\n"
     << "                         under moving constraints)\n"
     << "  --inverse-dynamics FILE.csv  instead of a run: the inputs u and\n"
     << "                       multipliers that produce the motion in FILE\n"
     << "                       (t and the coordinates; v_ columns used when\n"
     << "                       present), written to\n"
     << "                       DIR/<name>.inverse_dynamics.csv and .json\n"
     << "                       (docs/inverse_dynamics.md)\n"
     << "  --id-weights CH=W,.. input weights: over-actuated motions get the\n"
     << "                       inputs minimizing sum W u^2 (default 1)\n"
     << "  --id-degree D        degree of the local polynomial fits that\n"
     << "                       differentiate the samples (default 4)\n"
     << "  --id-window W        samples per fit (default D + 1)\n"
     << "  --error-estimate     after the run, its estimated global error\n"
     << "                       from a second run at 1000 times tighter\n"
     << "                       tolerances (docs/diagnostics.md)\n"
     << "  --optimize SPEC.json instead of a run: the optimal control problem\n"
     << "                       of SPEC (controls, objective, constraints,\n"
     << "                       solver) solved with IPOPT; writes the\n"
     << "                       solution's run and DIR/<name>.controls.csv\n"
     << "                       (docs/optimal_control.md)\n"
     << "  --guess NAME=V,...   with --optimize: the initial guess of free\n"
     << "                       variables (u.c0, a free parameter, q0[x])\n"
     << "  --quiet              no summary on stdout\n"
     << "  --help               this text\n\n"
     << "ensembles (docs/ensembles.md; under mpirun -np N across N ranks):\n"
     << "  --ensemble FILE      one run per data row of FILE (CSV: a header\n"
     << "                       of parameter names, options such as t_end,\n"
     << "                       rtol, formulation, and name); each writes\n"
     << "                       DIR/members/NNNNNN/, the gathered table is\n"
     << "                       DIR/<name>.ensemble.csv and .json\n"
     << "  --monte-carlo N      N runs with parameters drawn from --dist\n"
     << "  --dist P=KIND:A,B    uniform:LO,HI | normal:MEAN,SD |\n"
     << "                       lognormal:MU,SIGMA (repeatable)\n"
     << "  --seed S             the draws' seed (default 0); member i's\n"
     << "                       values depend only on (S, i)\n"
     << "  --multi-start N      with --optimize: N optimizations, member 0\n"
     << "                       from the spec's guess, the others from\n"
     << "                       guesses drawn within the variables' bounds;\n"
     << "                       the optima grouped, the best named (with\n"
     << "                       --ensemble FILE, columns named as the free\n"
     << "                       variables give the starts)\n\n"
     << "parameters:";
  for (int i = 0; i < m.num_parameters(); ++i) {
    os << "\n  " << m.parameter_names()[i] << " = "
       << m.default_parameters()[i];
    const ParamRange& r = m.parameter_ranges()[static_cast<size_t>(i)];
    if (r.Describe() != "any value") os << "  (" << r.Describe() << ")";
  }
  if (m.num_parameters() == 0) os << " (none)";
  os << "\ninput channels (for --counterfactual):";
  for (const auto& in : m.inputs()) os << " " << in.name;
  if (m.num_inputs() == 0) os << " (none)";
  os << "\n";
  return os.str();
}

}  // namespace daedalus
