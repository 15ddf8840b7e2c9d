# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Configure and build the patched Ganesha tree as an external project, configured like
# Debian's package where it matters for the FSAL ABI (FSAL_DESTINATION, library dir, 9P on),
# with the system libntirpc and without the FSALs and features we do not ship.
#
# Provides: target `ganesha` (the build), GANESHA_BINARY_DIR, the INTERFACE target
# `ganesha_headers` for code that includes Ganesha's headers, and FF_PLUGINS_DIR, a folder
# holding every FSAL module the test servers load (Plugins_Dir in their ganesha.conf).

include(ExternalProject)

if(FF_GANESHA_TREE)
    set(GANESHA_BINARY_DIR "${FF_GANESHA_TREE}/build")
else()
    set(GANESHA_BINARY_DIR "${CMAKE_BINARY_DIR}/ganesha/build")
endif()
set(FF_PLUGINS_DIR "${CMAKE_BINARY_DIR}/plugins")

# CephFS as a namespace under FLEXFILES (FSAL_CEPH) and the RADOS recovery backends that
# several MDSs on one CephFS share (rados_cluster): on where Debian's libcephfs-dev and
# librados-dev are installed (setup-deps installs both); the ceph tests need them.
find_library(FF_LIBCEPHFS cephfs)
find_library(FF_LIBRADOS rados)
if(FF_LIBCEPHFS AND FF_LIBRADOS)
    set(_ff_ceph_default ON)
else()
    set(_ff_ceph_default OFF)
endif()
option(FF_WITH_CEPH "Build Ganesha's FSAL_CEPH and RADOS recovery backends" ${_ff_ceph_default})
if(FF_WITH_CEPH)
    set(_ff_ceph_args -DUSE_FSAL_CEPH=ON -DUSE_RADOS_RECOV=ON)
else()
    set(_ff_ceph_args -DUSE_FSAL_CEPH=OFF -DUSE_RADOS_RECOV=OFF)
endif()

set(GANESHA_CMAKE_ARGS
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DUSE_SYSTEM_NTIRPC=ON
    -DFSAL_DESTINATION=/usr/lib/x86_64-linux-gnu/ganesha
    -DLIB_INSTALL_DIR=lib/x86_64-linux-gnu
    -DCMAKE_INSTALL_PREFIX=/usr
    -DSYSCONFDIR=/etc
    -DUSE_9P=ON
    -DUSE_FSAL_VFS=ON -DUSE_FSAL_MEM=ON -DUSE_FSAL_NULL=ON
    ${_ff_ceph_args} -DUSE_FSAL_GLUSTER=OFF -DUSE_FSAL_RGW=OFF -DUSE_FSAL_GPFS=OFF
    -DUSE_FSAL_LUSTRE=OFF -DUSE_FSAL_LIZARDFS=OFF -DUSE_FSAL_KVSFS=OFF -DUSE_FSAL_XFS=OFF
    -DRADOS_URLS=OFF -DUSE_LTTNG=OFF -DUSE_GUI_ADMIN_TOOLS=OFF
    "-DFFWCC_PROTOCOLS_DIR=${PROJECT_SOURCE_DIR}/protocols"
    ${FF_SANITIZE_GANESHA_ARGS})

if(FF_GANESHA_TREE)
    # Built elsewhere: nothing to do here.
    add_custom_target(ganesha)
else()
ExternalProject_Add(ganesha
    SOURCE_DIR "${GANESHA_SOURCE_DIR}"
    BINARY_DIR "${GANESHA_BINARY_DIR}"
    CMAKE_ARGS ${GANESHA_CMAKE_ARGS}
    # make decides what is out of date; unchanged, this step takes a couple of seconds.
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS "${GANESHA_BINARY_DIR}/ganesha.nfsd"
                     "${GANESHA_BINARY_DIR}/SAL/libganesha_rados_recov.so"
                     "${GANESHA_BINARY_DIR}/FSAL/FSAL_CEPH/libfsalceph.so"
                     "${GANESHA_BINARY_DIR}/MainNFSD/libganesha_nfsd.so")
endif()

add_library(ganesha_headers INTERFACE)
add_dependencies(ganesha_headers ganesha)
target_include_directories(ganesha_headers SYSTEM INTERFACE
    "${GANESHA_BINARY_DIR}/include"
    "${GANESHA_SOURCE_DIR}/include"
    "${GANESHA_SOURCE_DIR}/include/os/linux"
    /usr/include/ntirpc
    "${PROJECT_SOURCE_DIR}/protocols/include")
target_compile_definitions(ganesha_headers INTERFACE
    HAS_DOFF _GNU_SOURCE=1 __USE_GNU _LARGEFILE64_SOURCE _FILE_OFFSET_BITS=64)
target_link_libraries(ganesha_headers INTERFACE ntirpc)

# The folder test servers load FSALs from: Ganesha's own modules, and ours built into it.
file(MAKE_DIRECTORY "${FF_PLUGINS_DIR}")
set(_ff_fsals
    "FSAL/FSAL_VFS/vfs/libfsalvfs.so"
    "FSAL/FSAL_MEM/libfsalmem.so"
    "FSAL/Stackable_FSALs/FSAL_NULL/libfsalnull.so")
if(FF_WITH_CEPH)
    list(APPEND _ff_fsals "FSAL/FSAL_CEPH/libfsalceph.so")
endif()
foreach(_fsal ${_ff_fsals})
    get_filename_component(_name "${_fsal}" NAME)
    file(CREATE_LINK "${GANESHA_BINARY_DIR}/${_fsal}" "${FF_PLUGINS_DIR}/${_name}" SYMBOLIC)
endforeach()
set(GANESHA_NFSD "${GANESHA_BINARY_DIR}/ganesha.nfsd")
