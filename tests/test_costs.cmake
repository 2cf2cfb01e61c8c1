# The suite's longest tests, started first (included at the end of
# tests/CMakeLists.txt). CTest starts parallel tests in decreasing COST,
# taken from its record of earlier runs (Testing/Temporary/CTestCostData.txt)
# and otherwise from this property; a clean clone has no record, so the
# tests started in the order they are defined, and the longest of them
# (Robustness.Signals, 77 s under the sanitizers) was defined near the end:
# the sanitizer tests took 183 s on 2 cores for 281 s of work
# (docs/performance.md, "8 December: CI time"). The costs are seconds, the
# longer of the two builds' times in a clean clone of 174dbc2; only the
# order matters.
set(daedalus_test_costs
  Robustness.Signals 77
  SupportMatrix.Cells.index3 47
  SupportMatrix.QuaternionCells 26
  SquatToStand.ShootingGradientsMatchCentralDifferences 17
  Golfer3dOptimize.ShootingGradientsMatchCentralDifferences 17
  Multibody.PlotDrawsTheMechanism 15
  Package.InstallFindPackageAndExternalProblem 12
  Golfer3dOptimize.FunctionalsMatchTheFramePoses 12
  Golfer3dOptimum.MeetsTheFirstOrderConditions 13
  Multibody.ViewerDrawsInChromium 10
  EventSensitivities.Golfer3dHeadSpeedAtImpactMatchesDifferences 9
  HumanoidStanding.StandsStillOnTheSparseKktPath 9
  Ensemble.MpiTwoRanksAgreeWithSerial 8
  Mjcf.ExecutableRunsHumanoid100 8
  SquatToStand.MinimumEffortRiseReachesStandingWithinTheRanges 8
  PendulumWallSensitivities.ImpactsWithABilateralRodMatchDifferences 7
  Robustness.FuzzCommandLine 7
  Run.ModelsThatBranchOnValuesRunOnDualNumbers 7
  SupportMatrix.Cells.baumgarte 6
  Robustness.Interrupt 5
  Robustness.RandomModels 5
  SupportMatrix.Cells.unstabilized 5
  ConeImpulse.FourCornersOfABoxMeetCoulombAndNewtonAndDissipate 5)

# Tests added here with add_test take the property now. GoogleTest's tests
# are discovered when CTest runs, from include files listed in the
# directory's TEST_INCLUDE_FILES; a file appended after them (test_costs
# in the build tree) sets theirs. CTest ignores names it does not have
# (a test not built in this configuration).
set(_costs_script "")
set(_rest ${daedalus_test_costs})
while(_rest)
  list(POP_FRONT _rest _name _cost)
  if(TEST ${_name})
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  else()
    string(APPEND _costs_script
      "set_tests_properties([=[${_name}]=] PROPERTIES COST ${_cost})\n")
  endif()
endwhile()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/test_costs.cmake "${_costs_script}")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES
  ${CMAKE_CURRENT_BINARY_DIR}/test_costs.cmake)
