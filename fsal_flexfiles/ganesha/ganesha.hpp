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
#include "gsh_dbus.h"
#include "log.h"
}
