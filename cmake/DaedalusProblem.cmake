# daedalus_add_problem(<name> <source>... [LINK_LIBRARIES <library>...])
#
# Builds the problem executable <name> from the given sources (one of them
# defines main() and hands a Problem to daedalus::run) with the native
# kernels of its model compiled in (include/daedalus/kernels.hpp):
#
#   <name>_objects    OBJECT library of the sources; links daedalus::daedalus
#                     (and LINK_LIBRARIES) PUBLIC. Add include directories,
#                     definitions or options for the sources to it.
#   <name>_kernelgen  the same objects linked without kernels; the build runs
#                     it once as `<name>_kernelgen --emit-kernels FILE` to
#                     write the kernels of the model's compiled programs
#   <name>            the objects and the generated <name>_kernels.cpp
#                     (the MPI transport of ensembles and the sparse linear
#                     algebra are modules it loads when a run needs them;
#                     docs/ensembles.md, docs/performance.md)
#
# A model that cannot be compiled gets an empty kernel file and runs on dual
# numbers. LINK_LIBRARIES are linked into both executables (an OBJECT
# library given there has its objects linked into both).
#
# The same function builds the catalogue in the source tree
# (problems/CMakeLists.txt) and a user's problem against an installed
# Daedalus (find_package(daedalus CONFIG) includes this file;
# docs/using_as_a_package.md).
include_guard(GLOBAL)

function(daedalus_add_problem name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LINK_LIBRARIES")
  set(sources ${arg_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "daedalus_add_problem(${name}): no source files; "
      "usage: daedalus_add_problem(<name> <source>... [LINK_LIBRARIES <library>...])")
  endif()
  if(NOT TARGET daedalus::daedalus)
    message(FATAL_ERROR "daedalus_add_problem(${name}): the target "
      "daedalus::daedalus does not exist; call find_package(daedalus CONFIG "
      "REQUIRED) first")
  endif()

  add_library(${name}_objects OBJECT ${sources})
  target_link_libraries(${name}_objects PUBLIC daedalus::daedalus ${arg_LINK_LIBRARIES})

  # Stage 1: the problem without kernels, run by the build to write them.
  add_executable(${name}_kernelgen)
  target_link_libraries(${name}_kernelgen PRIVATE ${name}_objects ${arg_LINK_LIBRARIES})
  set_target_properties(${name}_kernelgen PROPERTIES LINKER_LANGUAGE CXX)
  set(kernels ${CMAKE_CURRENT_BINARY_DIR}/${name}_kernels.cpp)
  add_custom_command(OUTPUT ${kernels}
    COMMAND ${name}_kernelgen --emit-kernels ${kernels}
    DEPENDS ${name}_kernelgen
    COMMENT "Generating the native kernels of ${name}"
    VERBATIM)

  # Stage 2: the problem with its kernels.
  add_executable(${name} ${kernels})
  target_link_libraries(${name} PRIVATE ${name}_objects ${arg_LINK_LIBRARIES})
endfunction()
