// SPDX-License-Identifier: LGPL-3.0-or-later
#include "wcc/wcc_ops.hpp"

namespace flexfiles::wcc {

bool export_supports_layout_wcc(const Export*) noexcept { return false; }

void init_wcc_obj_ops(fsal_obj_ops&) noexcept {}

fsal_status_t overlay_data_attrs(Export&, Handle&, const mds::DataFileMap&,
                                 fsal_attrlist*) noexcept {
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

} // namespace flexfiles::wcc
