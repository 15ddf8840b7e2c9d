// SPDX-License-Identifier: LGPL-3.0-or-later
#include "wcc/wcc_ops.hpp"

namespace flexfiles::wcc {

bool export_supports_layout_wcc(const Export*) noexcept { return false; }

void init_wcc_obj_ops(fsal_obj_ops&) noexcept {}

} // namespace flexfiles::wcc
