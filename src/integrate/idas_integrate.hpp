// The IDAS adapter (idas_integrate.cpp): GGL, index-3 and index-1 DAE
// forms of a constrained model.
#pragma once

#include <Eigen/Core>

#include "daedalus/simulate.hpp"

namespace daedalus::internal {

SimulationSummary SimulateIdas(const Model& model,
                               const InitialState& x0,
                               const Eigen::VectorXd& params,
                               const SimulationOptions& options,
                               Observer* observer);

/// What the IDAS callbacks compute at one point (for tests): the residual
/// F(t, y, yp), the Jacobian dF/dy + cj dF/dyp (dense) and the quadrature
/// integrands, by the compiled programs when `options.compiled` and the
/// model allow (then `compiled`), else by the dual-number path.
struct IdasProbe {
  bool compiled = false;
  Eigen::VectorXd residual;
  Eigen::MatrixXd jacobian;
  Eigen::VectorXd quadratures;
};
IdasProbe ProbeIdas(const Model& model,
                    const SimulationOptions& options,
                    const Eigen::VectorXd& params,
                    double t,
                    const Eigen::VectorXd& y,
                    const Eigen::VectorXd& yp,
                    double cj);

/// The tangents of the residual and of the quadrature integrands along
/// (dy, dyp) and the parameter direction dp (np): what the forward
/// sensitivity callbacks compute, by the compiled programs when
/// `options` asks for exact forward sensitivities and the model allows
/// (then `compiled`), else by the dual-number path. For tests.
struct IdasTangentProbe {
  bool compiled = false;
  Eigen::VectorXd residual;
  Eigen::VectorXd quadratures;
};
IdasTangentProbe ProbeIdasTangent(const Model& model,
                                  const SimulationOptions& options,
                                  const Eigen::VectorXd& params,
                                  double t,
                                  const Eigen::VectorXd& y,
                                  const Eigen::VectorXd& yp,
                                  const Eigen::VectorXd& dy,
                                  const Eigen::VectorXd& dyp,
                                  const Eigen::VectorXd& dp);

/// Builds the IDAS programs of `model` under `options` (as a run would),
/// so that a ProgramCollector records them.
void PrepareIdasPrograms(const Model& model,
                         const SimulationOptions& options,
                         const Eigen::VectorXd& params);

}  // namespace daedalus::internal
