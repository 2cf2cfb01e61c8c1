// Pieces of forward sensitivity analysis shared by the integrator adapters
// (docs/sensitivities.md): parameter directions, SUNDIALS's
// difference-quotient parameter lists, and the header of a forward result.
// The exact tangents themselves belong to the formulations
// (formulation/ode_form.hpp, formulation/dae_form.hpp).
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/sensitivity.hpp"

namespace daedalus::internal {

/// The parameter direction of one sensitivity parameter (np): e_index for
/// a model parameter, zero for an initial condition.
Eigen::VectorXd ParameterDirection(const Model& model, const SensParameter& sp);

/// The header of a forward result: method, parameter names and the names
/// of the rows of `final` (coordinates, v_<coordinate>, lambda_<row>).
void StartForwardResult(const Model& model,
                        const std::vector<SensParameter>& sens,
                        SensitivityResult* sr);

/// SUNDIALS's difference-quotient sensitivities perturb the parameter
/// array itself, so they apply to model parameters only: fills `plist`
/// (their indices) and `pbar` (|p|, 1 where p = 0, the perturbation scale)
/// and returns an error text naming an initial-condition parameter (empty
/// when all are model parameters).
std::string DqParameters(const std::vector<SensParameter>& sens,
                         const Eigen::VectorXd& p,
                         std::vector<int>* plist,
                         Eigen::VectorXd* pbar);

}  // namespace daedalus::internal
