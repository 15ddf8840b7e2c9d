# SPDX-License-Identifier: LGPL-3.0-or-later
#
# ff_core_library(NAME SOURCES src... [LINK lib...]): the static library ff_<NAME> of
# fsal_flexfiles/core/<NAME>/ (include root FF_CORE_DIR, fsal_flexfiles/core). Used by
# fsal_flexfiles/core/CMakeLists.txt and by tools/ configured on its own (ff_model).
set(FF_CORE_DIR "${CMAKE_CURRENT_LIST_DIR}/../fsal_flexfiles/core")

function(ff_core_library name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
    add_library(ff_${name} STATIC ${ARG_SOURCES})
    target_compile_features(ff_${name} PUBLIC cxx_std_20)
    target_compile_options(ff_${name} PRIVATE -Wall -Wextra)
    target_include_directories(ff_${name} PUBLIC "${FF_CORE_DIR}")
    target_link_libraries(ff_${name} PUBLIC ${ARG_LINK})
    set_target_properties(ff_${name} PROPERTIES
        POSITION_INDEPENDENT_CODE ON
        CXX_EXTENSIONS OFF
        # Keep our symbols out of the module's dynamic symbol table.
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON)
endfunction()
