// An observer that keeps every sample of a run in memory: the branches of
// the counterfactual analyses (analysis/, cli/run_extras.cpp) and the
// results of a run from Python (python/run_bindings.cpp).
#pragma once

#include <vector>

#include "daedalus/simulate.hpp"

namespace daedalus::internal {

class SampleCollector : public Observer {
 public:
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

}  // namespace daedalus::internal
