# SPDX-License-Identifier: LGPL-3.0-or-later
#
# -DFF_FUZZ=ON (with CC=clang CXX=clang++): the libFuzzer targets of tests/fuzz. Every
# library of ours is built with coverage instrumentation (-fsanitize=fuzzer-no-link) so the
# fuzzer sees the branches of our decoders and of the XDR routines they inline from the
# patched nfsv41.h; FF_SANITIZE defaults to address,undefined. A fuzz tree builds the
# FSAL, the tools, the unit tests and the fuzz targets only (no servers are started from
# it), usually against the Ganesha of another tree (-DFF_GANESHA_TREE=<build>/ganesha).
option(FF_FUZZ "Build the libFuzzer targets (tests/fuzz; needs clang)" OFF)

if(FF_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "FF_FUZZ needs clang: CC=clang CXX=clang++ cmake -DFF_FUZZ=ON ...")
    endif()
    if(NOT FF_SANITIZE)
        set(FF_SANITIZE "address,undefined" CACHE STRING "" FORCE)
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link)
endif()
