// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/layout_ops.hpp"

namespace flexfiles::layout {

bool export_grants_layouts(const Export*) noexcept { return false; }

void init_layout_module_ops(fsal_ops&) noexcept {}
void init_layout_export_ops(export_ops&) noexcept {}
void init_layout_obj_ops(fsal_obj_ops&) noexcept {}

void on_open(Export&, Handle&, struct state_t*, fsal_openflags_t) noexcept {}

} // namespace flexfiles::layout
