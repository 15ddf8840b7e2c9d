// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The one way FLEXFILES C++ code includes Ganesha: the headers that compile
// as C++ (inside extern "C"), and shim.h for what lives behind the ones that
// do not (see shim.h for that decision).
#pragma once

extern "C" {
// config.h is Ganesha's generated build configuration (_USE_9P and friends):
// it must come first, exactly as in Ganesha's own sources, or structs such as
// the request types in fsal_api.h get a different layout than the core's.
#include "config.h"
// (the rest in any order)
#include "FSAL/fsal_init.h"
#include "config_parsing.h"
#include "fsal.h"
#include "fsal_api.h"
#include "ganesha/config_blocks.h"
#include "ganesha/shim.h"
#include "log.h"
}

// FSAL API 12 (our protocols/ patch series) adds the object method layout_wcc
// and an fsinfo option that says an export implements it. The code that uses
// them (handle.cpp: layout_wcc; export.cpp: fs_supports) is compiled only
// when FF_FSAL_HAS_LAYOUT_WCC is 1.
// TODO(lead): when the patched headers land, check the member, enum and
// argument names used there against the patch and turn this on (here or with
// -DFF_FSAL_HAS_LAYOUT_WCC=1). Left off, the module still builds against API
// 12 and behaves the same: Ganesha's default layout_wcc answers NOTSUPP and
// the sub-FSAL does not claim the option.
#ifndef FF_FSAL_HAS_LAYOUT_WCC
#define FF_FSAL_HAS_LAYOUT_WCC 0
#endif
