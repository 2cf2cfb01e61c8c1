# FindSuiteSparse: SuiteSparse 5.x as packaged by Debian 12 (libsuitesparse-dev),
# which installs headers in /usr/include/suitesparse and libraries in the
# multiarch directory but no CMake package configuration.
#
# Defines, for each component found, the imported target SuiteSparse::<name>
# with its include directory and its link dependencies:
#   suitesparseconfig amd colamd camd ccolamd cholmod klu btf umfpack spqr
# and SuiteSparse_FOUND. Components listed in find_package(... COMPONENTS ...)
# are required.
include(FindPackageHandleStandardArgs)

find_path(SuiteSparse_INCLUDE_DIR
  NAMES SuiteSparse_config.h
  PATH_SUFFIXES suitesparse
  HINTS /usr/include /usr/local/include)

# name -> libraries it links against (in link order, already defined above it).
set(_ss_all suitesparseconfig amd colamd camd ccolamd cholmod btf klu umfpack spqr)
set(_ss_deps_suitesparseconfig "")
set(_ss_deps_amd suitesparseconfig)
set(_ss_deps_colamd suitesparseconfig)
set(_ss_deps_camd suitesparseconfig)
set(_ss_deps_ccolamd suitesparseconfig)
set(_ss_deps_cholmod amd colamd camd ccolamd suitesparseconfig)
set(_ss_deps_btf suitesparseconfig)
set(_ss_deps_klu amd colamd btf suitesparseconfig)
set(_ss_deps_umfpack cholmod amd suitesparseconfig)
set(_ss_deps_spqr cholmod suitesparseconfig)

foreach(_c IN LISTS _ss_all)
  find_library(SuiteSparse_${_c}_LIBRARY
    NAMES ${_c}
    HINTS /usr/lib/x86_64-linux-gnu /usr/lib /usr/local/lib)
  if(SuiteSparse_${_c}_LIBRARY AND SuiteSparse_INCLUDE_DIR)
    set(SuiteSparse_${_c}_FOUND TRUE)
    if(NOT TARGET SuiteSparse::${_c})
      add_library(SuiteSparse::${_c} UNKNOWN IMPORTED)
      set_target_properties(SuiteSparse::${_c} PROPERTIES
        IMPORTED_LOCATION "${SuiteSparse_${_c}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${SuiteSparse_INCLUDE_DIR}")
      set(_links "")
      foreach(_d IN LISTS _ss_deps_${_c})
        if(TARGET SuiteSparse::${_d})
          list(APPEND _links SuiteSparse::${_d})
        endif()
      endforeach()
      if(_links)
        set_target_properties(SuiteSparse::${_c} PROPERTIES
          INTERFACE_LINK_LIBRARIES "${_links}")
      endif()
    endif()
  else()
    set(SuiteSparse_${_c}_FOUND FALSE)
  endif()
  mark_as_advanced(SuiteSparse_${_c}_LIBRARY)
endforeach()
mark_as_advanced(SuiteSparse_INCLUDE_DIR)

find_package_handle_standard_args(SuiteSparse
  REQUIRED_VARS SuiteSparse_INCLUDE_DIR
  HANDLE_COMPONENTS)
