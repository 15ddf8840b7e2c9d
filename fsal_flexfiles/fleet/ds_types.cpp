// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ds_types.h"

#include <cstring>

namespace flexfiles::fleet {

std::optional<DsFh> DsFh::from_bytes(const void* bytes, std::size_t size) {
    if (bytes == nullptr || size == 0 || size > kMaxSize)
        return std::nullopt;
    DsFh fh;
    fh.len = static_cast<std::uint8_t>(size);
    std::memcpy(fh.data.data(), bytes, size);
    return fh;
}

std::string DsFh::hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(2 * len);
    for (std::size_t i = 0; i < len; ++i) {
        s.push_back(kDigits[data[i] >> 4]);
        s.push_back(kDigits[data[i] & 0xf]);
    }
    return s;
}

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
    }
    return "?";
}

std::string nfs3_status_name(std::uint32_t status) {
    switch (status) {
    case 0:
        return "NFS3_OK";
    case 1:
        return "NFS3ERR_PERM";
    case 2:
        return "NFS3ERR_NOENT";
    case 5:
        return "NFS3ERR_IO";
    case 6:
        return "NFS3ERR_NXIO";
    case 13:
        return "NFS3ERR_ACCES";
    case 17:
        return "NFS3ERR_EXIST";
    case 18:
        return "NFS3ERR_XDEV";
    case 19:
        return "NFS3ERR_NODEV";
    case 20:
        return "NFS3ERR_NOTDIR";
    case 21:
        return "NFS3ERR_ISDIR";
    case 22:
        return "NFS3ERR_INVAL";
    case 27:
        return "NFS3ERR_FBIG";
    case 28:
        return "NFS3ERR_NOSPC";
    case 30:
        return "NFS3ERR_ROFS";
    case 31:
        return "NFS3ERR_MLINK";
    case 63:
        return "NFS3ERR_NAMETOOLONG";
    case 66:
        return "NFS3ERR_NOTEMPTY";
    case 69:
        return "NFS3ERR_DQUOT";
    case 70:
        return "NFS3ERR_STALE";
    case 71:
        return "NFS3ERR_REMOTE";
    case 10001:
        return "NFS3ERR_BADHANDLE";
    case 10002:
        return "NFS3ERR_NOT_SYNC";
    case 10003:
        return "NFS3ERR_BAD_COOKIE";
    case 10004:
        return "NFS3ERR_NOTSUPP";
    case 10005:
        return "NFS3ERR_TOOSMALL";
    case 10006:
        return "NFS3ERR_SERVERFAULT";
    case 10007:
        return "NFS3ERR_BADTYPE";
    case 10008:
        return "NFS3ERR_JUKEBOX";
    }
    return "NFS3ERR_" + std::to_string(status);
}

} // namespace flexfiles::fleet
