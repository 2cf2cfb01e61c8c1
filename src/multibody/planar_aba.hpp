// The planar articulated-body algorithms (src/multibody/planar_aba*.cpp):
// the entry of the revolute-only one, and a switch for the tests that
// compare it with the generic planar ABA on the same tree.
#pragma once

#include "daedalus/multibody_dynamics.hpp"

namespace daedalus::mb::internal {

/// The planar ABA of a tree whose links are all revolute joints about +-z
/// (src/multibody/planar_aba_revolute.cpp): qdd (sized nv) and d->kinetic
/// from relative joint coordinates q, v, tau. Returns -2 when some link is
/// not revolute (nothing usable written: the caller runs the generic planar
/// ABA), -1 on success, or the index of a link whose articulated inertia
/// about its joint, left in d->D[i], is not positive.
template <class S>
int ForwardPlanarRevolute(const std::vector<RbLink>& links,
                          const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& tau,
                          TreeData<S>* d,
                          VecX<S>* qdd);

/// Tests only: false makes TreeDynamics::ForwardDynamics take the generic
/// planar ABA on revolute-only planar trees too (default true). Global,
/// not for concurrent use.
void UseRevolutePlanarAba(bool on);
bool RevolutePlanarAbaInUse();

/// Tests only: the revolute planar ABA's instruction-set versions on this
/// CPU (1: the baseline only; 2: also AVX2 + FMA; 3: also AVX-512), and a
/// cap on the one chosen (0: baseline, 1: AVX2, 2: AVX-512, the default;
/// the CPU's best below the cap). Global, not for concurrent use.
int RevoluteIsaLevels();
void CapRevoluteIsa(int level);

}  // namespace daedalus::mb::internal
