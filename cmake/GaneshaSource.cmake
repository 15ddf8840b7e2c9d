# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Ganesha 4.3 source: fetch Debian's upstream tarball, verify its checksum, extract it
# and apply our patch series (protocols/patches/series) in order.
#
# Runs at configure time. The patched tree is only touched where it differs from a fresh
# extraction + patches, so editing one patch rebuilds only the files it changes.
# Sets GANESHA_TOP_DIR (the extracted nfs-ganesha-4.3/) and GANESHA_SOURCE_DIR (its src/).

set(GANESHA_DEB_VERSION "4.3-2")
set(GANESHA_TARBALL_NAME "nfs-ganesha_4.3.orig.tar.gz")
set(GANESHA_TARBALL_SHA256 "d4efd020edf4dfe65abfd0f0f66eb4390613360f99dce4354467ab297e0e1c0f")
set(FF_DOWNLOAD_CACHE "${PROJECT_SOURCE_DIR}/.cache" CACHE PATH
    "Where the downloaded Ganesha tarball is kept between builds")
set(FF_PATCH_DIR "${PROJECT_SOURCE_DIR}/protocols/patches")

set(_tarball "${FF_DOWNLOAD_CACHE}/${GANESHA_TARBALL_NAME}")
if(NOT EXISTS "${_tarball}")
    message(STATUS "Fetching ${GANESHA_TARBALL_NAME} (apt-get source --tar-only nfs-ganesha=${GANESHA_DEB_VERSION})")
    file(MAKE_DIRECTORY "${FF_DOWNLOAD_CACHE}")
    execute_process(
        COMMAND apt-get source --tar-only -qq "nfs-ganesha=${GANESHA_DEB_VERSION}"
        WORKING_DIRECTORY "${FF_DOWNLOAD_CACHE}"
        RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_QUIET)
    if(NOT _rc EQUAL 0 OR NOT EXISTS "${_tarball}")
        message(FATAL_ERROR "Could not fetch ${GANESHA_TARBALL_NAME} with apt-get source "
                            "(is a deb-src entry enabled? run scripts/setup-deps.sh): ${_err}")
    endif()
endif()

file(SHA256 "${_tarball}" _actual)
if(NOT _actual STREQUAL GANESHA_TARBALL_SHA256)
    message(FATAL_ERROR "Checksum mismatch for ${_tarball}\n"
                        "  expected sha256 ${GANESHA_TARBALL_SHA256}\n"
                        "  actual   sha256 ${_actual}\n"
                        "Delete the file to fetch it again.")
endif()

# The series and every patch it names are inputs of the configure step.
set(_series "${FF_PATCH_DIR}/series")
set(_patches "")
if(EXISTS "${_series}")
    file(STRINGS "${_series}" _lines)
    foreach(_line IN LISTS _lines)
        string(STRIP "${_line}" _line)
        if(_line STREQUAL "" OR _line MATCHES "^#")
            continue()
        endif()
        if(NOT EXISTS "${FF_PATCH_DIR}/${_line}")
            message(FATAL_ERROR "protocols/patches/series names ${_line}, which does not exist")
        endif()
        list(APPEND _patches "${FF_PATCH_DIR}/${_line}")
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_series}" ${_patches})
endif()

# Fingerprint of what the tree should be: tarball + series + patches.
set(_fingerprint "${_actual}")
foreach(_p IN LISTS _patches)
    file(SHA256 "${_p}" _h)
    string(APPEND _fingerprint ";${_p}=${_h}")
endforeach()
string(SHA256 _fingerprint "${_fingerprint}")

set(_root "${CMAKE_BINARY_DIR}/ganesha")
set(GANESHA_TOP_DIR "${_root}/nfs-ganesha-4.3")
set(GANESHA_SOURCE_DIR "${GANESHA_TOP_DIR}/src")
set(_stamp "${_root}/source.stamp")
set(_old "")
if(EXISTS "${_stamp}")
    file(READ "${_stamp}" _old)
endif()

if(NOT _old STREQUAL _fingerprint OR NOT EXISTS "${GANESHA_SOURCE_DIR}/CMakeLists.txt")
    set(_fresh "${_root}/fresh")
    file(REMOVE_RECURSE "${_fresh}")
    file(MAKE_DIRECTORY "${_fresh}")
    execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf "${_tarball}"
                    WORKING_DIRECTORY "${_fresh}" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "Could not extract ${_tarball}")
    endif()
    foreach(_p IN LISTS _patches)
        get_filename_component(_pname "${_p}" NAME)
        execute_process(
            COMMAND patch -p1 --batch --forward --quiet -i "${_p}"
            WORKING_DIRECTORY "${_fresh}/nfs-ganesha-4.3"
            RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR "Patch ${_pname} does not apply to Ganesha ${GANESHA_DEB_VERSION}:\n${_out}")
        endif()
        message(STATUS "Applied ${_pname}")
    endforeach()
    # Copy only what changed, so make rebuilds only what the patches touched.
    file(MAKE_DIRECTORY "${GANESHA_TOP_DIR}")
    execute_process(
        COMMAND rsync -rlc --delete "${_fresh}/nfs-ganesha-4.3/" "${GANESHA_TOP_DIR}/"
        RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "Could not sync the patched Ganesha tree into ${GANESHA_TOP_DIR}")
    endif()
    file(REMOVE_RECURSE "${_fresh}")
    file(WRITE "${_stamp}" "${_fingerprint}")
endif()
