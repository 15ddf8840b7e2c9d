// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/nfs3.hpp"

#include "model/hex.hpp"

#include <cinttypes>
#include <cstdio>
#include <ostream>

namespace flexfiles::nfs3 {

std::optional<Fh> Fh::from_bytes(const void* bytes, std::size_t size) {
    if (bytes == nullptr || size == 0 || size > kMaxSize)
        return std::nullopt;
    return Fh(static_cast<const std::uint8_t*>(bytes), size);
}

std::string Fh::hex() const {
    return to_hex({data(), size()});
}

std::string status_name(Status s) {
    switch (s) {
    case Status::ok:
        return "NFS3_OK";
    case Status::perm:
        return "NFS3ERR_PERM";
    case Status::noent:
        return "NFS3ERR_NOENT";
    case Status::io:
        return "NFS3ERR_IO";
    case Status::nxio:
        return "NFS3ERR_NXIO";
    case Status::acces:
        return "NFS3ERR_ACCES";
    case Status::exist:
        return "NFS3ERR_EXIST";
    case Status::xdev:
        return "NFS3ERR_XDEV";
    case Status::nodev:
        return "NFS3ERR_NODEV";
    case Status::notdir:
        return "NFS3ERR_NOTDIR";
    case Status::isdir:
        return "NFS3ERR_ISDIR";
    case Status::inval:
        return "NFS3ERR_INVAL";
    case Status::fbig:
        return "NFS3ERR_FBIG";
    case Status::nospc:
        return "NFS3ERR_NOSPC";
    case Status::rofs:
        return "NFS3ERR_ROFS";
    case Status::mlink:
        return "NFS3ERR_MLINK";
    case Status::nametoolong:
        return "NFS3ERR_NAMETOOLONG";
    case Status::notempty:
        return "NFS3ERR_NOTEMPTY";
    case Status::dquot:
        return "NFS3ERR_DQUOT";
    case Status::stale:
        return "NFS3ERR_STALE";
    case Status::remote:
        return "NFS3ERR_REMOTE";
    case Status::badhandle:
        return "NFS3ERR_BADHANDLE";
    case Status::not_sync:
        return "NFS3ERR_NOT_SYNC";
    case Status::bad_cookie:
        return "NFS3ERR_BAD_COOKIE";
    case Status::notsupp:
        return "NFS3ERR_NOTSUPP";
    case Status::toosmall:
        return "NFS3ERR_TOOSMALL";
    case Status::serverfault:
        return "NFS3ERR_SERVERFAULT";
    case Status::badtype:
        return "NFS3ERR_BADTYPE";
    case Status::jukebox:
        return "NFS3ERR_JUKEBOX";
    }
    return "NFS3ERR_" + std::to_string(static_cast<std::uint32_t>(s));
}

std::ostream& operator<<(std::ostream& os, Status s) {
    return os << status_name(s);
}

const char* stable_name(StableHow s) {
    switch (s) {
    case StableHow::unstable:
        return "UNSTABLE";
    case StableHow::data_sync:
        return "DATA_SYNC";
    case StableHow::file_sync:
        return "FILE_SYNC";
    }
    return "STABLE_?";
}

std::string format_fattr(const Fattr& a) {
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "size=%" PRIu64 " used=%" PRIu64 " mode=%04o uid=%u gid=%u nlink=%u "
                  "fileid=%" PRIu64 " atime=%u.%09u mtime=%u.%09u ctime=%u.%09u",
                  a.size, a.used, a.mode, a.uid, a.gid, a.nlink, a.fileid, a.atime.seconds,
                  a.atime.nseconds, a.mtime.seconds, a.mtime.nseconds, a.ctime.seconds,
                  a.ctime.nseconds);
    return buf;
}

std::ostream& operator<<(std::ostream& os, const Fattr& a) {
    return os << "{" << format_fattr(a) << "}";
}

} // namespace flexfiles::nfs3
