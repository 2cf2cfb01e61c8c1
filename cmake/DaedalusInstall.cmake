# Install rules and the CMake package (docs/using_as_a_package.md):
#
#   include/daedalus/*.hpp                     the public headers
#   lib/libdaedalus.a                          the library (PIC)
#   lib/daedalus/libdaedalus_sparse.so         the SuiteSparse module, loaded
#                                              on first use
#   lib/daedalus/libdaedalus_mpi.so            the MPI transport of ensembles
#                                              (a module), when built with MPI
#   lib/daedalus/libdaedalus_ipopt.so          IPOPT for optimal control (a
#                                              module), when IPOPT was found
#   lib/libdaedalus_urdf.a, libdaedalus_mjcf.a the importers, when built
#   lib/cmake/daedalus/daedalusConfig.cmake    find_package(daedalus CONFIG)
#                      daedalusConfigVersion.cmake
#                      daedalusTargets.cmake   daedalus::daedalus
#                      daedalusUrdfTargets.cmake  daedalus::urdf
#                      daedalusMjcfTargets.cmake  daedalus::mjcf
#                      DaedalusProblem.cmake   daedalus_add_problem()
#
# tests/package/external_project_test.py installs a build tree with these
# rules and builds examples/external against it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DAEDALUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/daedalus
  CACHE STRING "Where the CMake package of Daedalus is installed, below the prefix")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/daedalus
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(TARGETS daedalus EXPORT daedalusTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT daedalusTargets
  NAMESPACE daedalus::
  DESTINATION ${DAEDALUS_INSTALL_CMAKEDIR})

# The importers, each in an export set of its own: the package loads it
# only when its Debian packages (urdfdom, tinyxml2) are found where it is
# used (cmake/daedalusConfig.cmake.in), so that a project without them
# still gets daedalus::daedalus.
set(DAEDALUS_WITH_URDF OFF)
set(DAEDALUS_WITH_MJCF OFF)
if(TARGET daedalus_urdf)
  set(DAEDALUS_WITH_URDF ON)
  install(TARGETS daedalus_urdf EXPORT daedalusUrdfTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT daedalusUrdfTargets NAMESPACE daedalus::
    DESTINATION ${DAEDALUS_INSTALL_CMAKEDIR})
endif()
if(TARGET daedalus_mjcf)
  set(DAEDALUS_WITH_MJCF ON)
  install(TARGETS daedalus_mjcf EXPORT daedalusMjcfTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT daedalusMjcfTargets NAMESPACE daedalus::
    DESTINATION ${DAEDALUS_INSTALL_CMAKEDIR})
endif()

# The modules that libdaedalus.a loads on first use
# (model/dynamic_module.hpp); the package gives every executable that links
# daedalus::daedalus a RUNPATH to this folder, wherever the prefix is moved.
install(TARGETS daedalus_sparse
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/daedalus)
set(DAEDALUS_WITH_MPI OFF)
if(TARGET daedalus_mpi)
  set(DAEDALUS_WITH_MPI ON)
  install(TARGETS daedalus_mpi
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/daedalus)
endif()

if(TARGET daedalus_ipopt)
  install(TARGETS daedalus_ipopt
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/daedalus)
endif()

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/daedalusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/daedalusConfig.cmake
  INSTALL_DESTINATION ${DAEDALUS_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/daedalusConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/daedalusConfig.cmake
  ${PROJECT_BINARY_DIR}/daedalusConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/DaedalusProblem.cmake
  DESTINATION ${DAEDALUS_INSTALL_CMAKEDIR})
