// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The FLEXFILES FSAL module: registration with Ganesha and the module-level
// operations. FLEXFILES is a stacking FSAL: each export sits on a sub-FSAL
// (VFS, say) that holds the metadata namespace, and will hand clients
// flexible-file layouts naming NFSv3 data servers for the file data.
#pragma once

#include "ganesha/ganesha.hpp"

namespace flexfiles {

// Ganesha's fsal_module plus the object-operation table that every handle of
// every FLEXFILES export points at.
struct Module : fsal_module {
    fsal_obj_ops handle_ops;
};

// Zero-initialised when the library is mapped (no C++ constructor runs for it)
// and filled in by the module constructor, which may run before this
// library's C++ static initialisation (ENVIRONMENT.md).
extern Module the_module;

} // namespace flexfiles
