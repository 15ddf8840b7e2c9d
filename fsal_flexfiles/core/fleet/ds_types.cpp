// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/ds_types.hpp"

namespace flexfiles::fleet {

std::string_view to_string(DsErrc code) {
    switch (code) {
    case DsErrc::ok:
        return "ok";
    case DsErrc::nfs:
        return "nfs";
    case DsErrc::timeout:
        return "timeout";
    case DsErrc::unavailable:
        return "unavailable";
    case DsErrc::disconnected:
        return "disconnected";
    case DsErrc::rpc:
        return "rpc";
    case DsErrc::invalid_argument:
        return "invalid_argument";
    case DsErrc::shutdown:
        return "shutdown";
    case DsErrc::not_found:
        return "not_found";
    case DsErrc::exists:
        return "exists";
    case DsErrc::too_few_servers:
        return "too_few_servers";
    case DsErrc::servers_unavailable:
        return "servers_unavailable";
    }
    return "?";
}

} // namespace flexfiles::fleet
