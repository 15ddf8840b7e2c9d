// SPDX-License-Identifier: LGPL-3.0-or-later
//
// libnfs's NFSv3 structs <-> the NFSv3 values of model/nfs3.hpp: the one conversion, used
// by the fleet (nfs3_calls.cpp) and by the test harness's NFSv3 client, which also speaks
// NFSv3 through libnfs's raw API. Everything is converted as sent: the fleet masks modes
// itself (ds_types.hpp), the harness shows tests what the server said.
#pragma once

#include "model/enum_bits.hpp" // libnfs C enum fields, read as their bits
#include "model/nfs3.hpp"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on

#include <optional>

namespace flexfiles::fleet {

nfs3::Time from_libnfs(const nfstime3& t);
nfs3::Fattr from_libnfs(const fattr3& a);
std::optional<nfs3::Fattr> from_libnfs(const post_op_attr& a);
std::optional<nfs3::WccAttr> from_libnfs(const pre_op_attr& a);
nfs3::Wcc from_libnfs(const wcc_data& w);
nfs3::WriteVerf from_libnfs(const writeverf3& v);

nfstime3 to_libnfs(const nfs3::Time& t);
// Unset members are DONT_CHANGE (times) or set_it = FALSE.
sattr3 to_libnfs(const nfs3::SetAttrs& s);

} // namespace flexfiles::fleet
