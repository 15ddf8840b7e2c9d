// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Names of NFSv4 operations and status codes, for traces, CLI output and test messages.
#pragma once

#include <cstdint>
#include <string>

namespace flexfiles::client {

// "LOOKUP", "LAYOUT_WCC", ...; "OP_76" for a number no RFC names here.
std::string op_name(uint32_t opnum);
// "NFS4_OK", "NFS4ERR_NOENT", ...; "NFS4ERR_12345" for an unknown value.
std::string status_name(uint32_t status);
// "CB_SEQUENCE", "CB_LAYOUTRECALL", ...
std::string cb_op_name(uint32_t opnum);

} // namespace flexfiles::client
