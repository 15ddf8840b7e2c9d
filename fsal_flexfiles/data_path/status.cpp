// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Data-server failures as FSAL statuses (see fsal_data_path.hpp for the choice).
#include "data_path/data_path.hpp"

#include <cerrno>

namespace flexfiles::mds {
namespace {

// nfsstat3 values (RFC 1813 2.6) that a client can act on.
constexpr std::uint32_t kNfs3ErrFbig = 27;
constexpr std::uint32_t kNfs3ErrNospc = 28;
constexpr std::uint32_t kNfs3ErrRofs = 30;
constexpr std::uint32_t kNfs3ErrDquot = 69;

} // namespace

fsal_status_t to_fsal_status(const fleet::DsStatus& st) noexcept {
    switch (st.code) {
    case fleet::DsErrc::ok:
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    case fleet::DsErrc::too_few_servers:
        return fsalstat(ERR_FSAL_NOSPC, ENOSPC);
    case fleet::DsErrc::servers_unavailable:
        // NFS4ERR_DELAY / NFS3ERR_JUKEBOX: the client retries, and the create succeeds
        // once enough data servers are Up again.
        return fsalstat(ERR_FSAL_DELAY, EAGAIN);
    case fleet::DsErrc::nfs:
        switch (st.nfs3) {
        case kNfs3ErrNospc:
            return fsalstat(ERR_FSAL_NOSPC, ENOSPC);
        case kNfs3ErrDquot:
            return fsalstat(ERR_FSAL_DQUOT, EDQUOT);
        case kNfs3ErrFbig:
            return fsalstat(ERR_FSAL_FBIG, EFBIG);
        case kNfs3ErrRofs:
            return fsalstat(ERR_FSAL_ROFS, EROFS);
        default:
            return fsalstat(ERR_FSAL_IO, EIO);
        }
    case fleet::DsErrc::timeout:
        return fsalstat(ERR_FSAL_IO, ETIMEDOUT);
    case fleet::DsErrc::unavailable:
        // Not Down, reconnecting (a data server that restarted): NFS4ERR_DELAY /
        // NFS3ERR_JUKEBOX, so the client asks again instead of failing the application's
        // write or fsync. A data server that stays away goes Down, and then it is EIO.
        if (st.reconnecting)
            return fsalstat(ERR_FSAL_DELAY, EAGAIN);
        return fsalstat(ERR_FSAL_IO, EIO);
    default:
        return fsalstat(ERR_FSAL_IO, EIO);
    }
}

} // namespace flexfiles::mds
