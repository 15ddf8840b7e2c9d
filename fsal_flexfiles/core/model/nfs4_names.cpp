// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/nfs4_names.hpp"

namespace flexfiles::nfs4 {

std::string iomode_name(std::uint32_t iomode) {
    switch (iomode) {
    case kIomodeRead:
        return "READ";
    case kIomodeRw:
        return "RW";
    case kIomodeAny:
        return "ANY";
    default:
        return "iomode " + std::to_string(iomode);
    }
}

} // namespace flexfiles::nfs4
