# SPDX-License-Identifier: LGPL-3.0-or-later
#
# ff_unit_test(NAME SOURCES src... [LIBS lib...])
# A CMocka unit test: one executable, one ctest entry labelled `unit`.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

function(ff_unit_test name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${ARG_LIBS})
    # cmocka_cpp.hpp: CMocka from C++ (tests/unit/support).
    target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests/unit/support")
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120)
    if(FF_SANITIZE_ENV)
        set_tests_properties(${name} PROPERTIES ENVIRONMENT "${FF_SANITIZE_ENV}")
    endif()
endfunction()
