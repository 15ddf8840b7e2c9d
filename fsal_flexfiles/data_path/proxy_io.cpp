// SPDX-License-Identifier: LGPL-3.0-or-later
//
// read2/write2/commit2 and SETATTR(size) of regular files, sent to the data files (see
// fsal_data_path.hpp and proxy_io.hpp).
//
// They complete before returning, on the worker thread that called them: each waits for
// the data servers' replies, bounded by DS_IO_Timeout per RPC. Completing from the data
// servers' event threads instead would run Ganesha's completion (and MDCACHE's) on a
// thread with no op_ctx.
#include "data_path/data_path.hpp"
#include "export.hpp"
#include "handle.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

namespace flexfiles::mds {
namespace {

std::size_t iov_total(const fsal_io_arg* arg) {
    std::size_t total = 0;
    for (int i = 0; i < arg->iov_count; ++i)
        total += arg->iov[i].iov_len;
    return total;
}

// On a namespace several MDSs share: the stale marks other MDSs left are taken in (the
// write treats those mirrors as stale), and the write lease is held (a resilverer on
// another MDS must know this one may write).
fsal_status_t before_shared_write(Export& exp, Handle& handle, const DataFileMap& map) {
    if (!map_in_namespace(exp))
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    adopt_namespace_stale_marks(exp, handle, map);
    return hold_write_lease(exp, handle);
}

// The file's stale marks before a write, where after_shared_write needs them (a shared
// namespace); nothing elsewhere.
std::vector<std::uint32_t> shared_stale_marks(Export& exp, const DataFileMap& map) {
    return map_in_namespace(exp) ? exp.stale_mirrors().of(map.file_id)
                                 : std::vector<std::uint32_t>{};
}

// The mirrors the write marked stale go onto the namespace object before the client hears
// success: other MDSs must stop reading them. If they cannot, the write fails (the mark
// stays in this MDS's registry: its own reads and layouts leave the mirror out).
fsal_status_t after_shared_write(Export& exp, Handle& handle, const DataFileMap& map,
                                 const std::vector<std::uint32_t>& stale_before) {
    if (!map_in_namespace(exp))
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    std::vector<std::uint32_t> fresh;
    for (std::uint32_t m : exp.stale_mirrors().of(map.file_id))
        if (std::find(stale_before.begin(), stale_before.end(), m) == stale_before.end())
            fresh.push_back(m);
    if (fresh.empty())
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    std::string error;
    if (publish_stale_marks(exp, handle.sub, handle.key, map, fresh, error))
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    LogCrit(COMPONENT_FSAL,
            "%s: fileid %" PRIu64 ": %zu mirror(s) missed a write and could not be marked "
            "stale for the other MDSs (%s): the write fails",
            exp.label().c_str(), handle.fileid, fresh.size(), error.c_str());
    return fsalstat(ERR_FSAL_IO, EIO);
}

} // namespace

void proxy_read(Export& exp, Handle& handle, fsal_async_cb done_cb, fsal_io_arg* read_arg,
                void* caller_arg) noexcept {
    fsal_status_t status = fsalstat(ERR_FSAL_NO_ERROR, 0);
    read_arg->io_amount = 0;
    try {
        const std::shared_ptr<const DataFileMap> map = handle.data_files();
        if (map && map_in_namespace(exp))
            adopt_namespace_stale_marks(exp, handle, *map); // never read what another MDS marked
        const std::size_t want =
            std::min<std::size_t>(iov_total(read_arg), std::numeric_limits<std::uint32_t>::max());
        if (!map) {
            // Never written: the file has no bytes anywhere.
            read_arg->end_of_file = true;
        } else {
            // Ganesha reads into one buffer (iov_count 1), which the data servers' replies
            // fill directly; several buffers are filled from one of our own.
            const bool one_buffer = read_arg->iov_count == 1;
            std::vector<std::uint8_t> gathered(one_buffer ? 0 : want);
            const std::span<std::uint8_t> into =
                one_buffer ? std::span(static_cast<std::uint8_t*>(read_arg->iov[0].iov_base), want)
                           : std::span(gathered);
            const ProxyReadResult r = exp.proxy().read(*map, read_arg->offset, into);
            if (!r.status.ok()) {
                LogWarn(COMPONENT_FSAL, "%s: READ of fileid %" PRIu64 " at %" PRIu64 " (+%zu): %s",
                        exp.label().c_str(), handle.fileid, read_arg->offset, want,
                        r.status.message.c_str());
                status = to_fsal_status(r.status);
            } else {
                std::size_t copied = one_buffer ? r.count : 0;
                for (int i = 0; !one_buffer && i < read_arg->iov_count && copied < r.count; ++i) {
                    const std::size_t n = std::min(read_arg->iov[i].iov_len, r.count - copied);
                    std::memcpy(read_arg->iov[i].iov_base, gathered.data() + copied, n);
                    copied += n;
                }
                read_arg->io_amount = copied;
                read_arg->end_of_file = r.eof;
            }
        }
        if (!FSAL_IS_ERROR(status) && read_arg->info != nullptr) {
            // READ_PLUS: all data, no holes (as FSAL_VFS answers).
            read_arg->info->io_content.what = NFS4_CONTENT_DATA;
            read_arg->info->io_content.data.d_offset = read_arg->offset + read_arg->io_amount;
            read_arg->info->io_content.data.d_data.data_len =
                static_cast<u_int>(read_arg->io_amount);
            read_arg->info->io_content.data.d_data.data_val =
                read_arg->iov_count > 0 ? static_cast<char*>(read_arg->iov[0].iov_base) : nullptr;
        }
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: READ of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
        status = fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
    done_cb(&handle, status, read_arg, caller_arg);
}

void proxy_write(Export& exp, Handle& handle, fsal_async_cb done_cb, fsal_io_arg* write_arg,
                 void* caller_arg) noexcept {
    fsal_status_t status = fsalstat(ERR_FSAL_NO_ERROR, 0);
    write_arg->io_amount = 0;
    try {
        std::shared_ptr<const DataFileMap> map;
        status = ensure_data_files(exp, handle, &map);
        if (!FSAL_IS_ERROR(status))
            status = before_shared_write(exp, handle, *map);
        if (!FSAL_IS_ERROR(status)) {
            // One iovec (what Ganesha's WRITE hands over) is passed as it is: ProxyIo keeps
            // the one copy the data servers' writes share.
            std::vector<std::uint8_t> joined;
            std::span<const std::uint8_t> data;
            if (write_arg->iov_count == 1) {
                data = {static_cast<const std::uint8_t*>(write_arg->iov[0].iov_base),
                        write_arg->iov[0].iov_len};
            } else {
                joined.reserve(iov_total(write_arg));
                for (int i = 0; i < write_arg->iov_count; ++i) {
                    const auto* p = static_cast<const std::uint8_t*>(write_arg->iov[i].iov_base);
                    joined.insert(joined.end(), p, p + write_arg->iov[i].iov_len);
                }
                data = joined;
            }
            // UNSTABLE only for NFSv4, whose verifier is the export's (mds/write_verifier.hpp).
            const bool stable =
                write_arg->fsal_stable || op_ctx == nullptr || op_ctx->nfs_vers != NFS_V4;
            const std::vector<std::uint32_t> stale_before = shared_stale_marks(exp, *map);
            const fleet::DsStatus st = exp.proxy().write(handle.key, *map, write_arg->offset, data,
                                                         stable ? fleet::StableHow::file_sync
                                                                : fleet::StableHow::unstable);
            if (st.ok())
                status = after_shared_write(exp, handle, *map, stale_before);
            if (!st.ok()) {
                LogWarn(COMPONENT_FSAL, "%s: WRITE of fileid %" PRIu64 " at %" PRIu64 " (+%zu): %s",
                        exp.label().c_str(), handle.fileid, write_arg->offset, data.size(),
                        st.message.c_str());
                status = to_fsal_status(st);
            } else if (!FSAL_IS_ERROR(status)) {
                write_arg->io_amount = data.size();
                write_arg->fsal_stable = stable;
            }
        }
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: WRITE of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
        status = fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
    done_cb(&handle, status, write_arg, caller_arg);
}

fsal_status_t proxy_commit(Export& exp, Handle& handle, off_t offset, size_t len) noexcept {
    try {
        const std::shared_ptr<const DataFileMap> map = handle.data_files();
        if (!map)
            return fsalstat(ERR_FSAL_NO_ERROR, 0);
        const auto count = static_cast<std::uint32_t>(
            std::min<size_t>(len, std::numeric_limits<std::uint32_t>::max()));
        const fleet::DsStatus st =
            exp.proxy().commit(*map, static_cast<std::uint64_t>(offset), count);
        if (st.ok())
            return fsalstat(ERR_FSAL_NO_ERROR, 0);
        LogWarn(COMPONENT_FSAL, "%s: COMMIT of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, st.message.c_str());
        return to_fsal_status(st);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: COMMIT of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

fsal_status_t proxy_truncate(Export& exp, Handle& handle, std::uint64_t size) noexcept {
    try {
        std::shared_ptr<const DataFileMap> map = handle.data_files();
        if (!map) {
            if (size == 0)
                return fsalstat(ERR_FSAL_NO_ERROR, 0); // no bytes anywhere already
            if (fsal_status_t st = ensure_data_files(exp, handle, &map); FSAL_IS_ERROR(st))
                return st;
        }
        if (fsal_status_t st = before_shared_write(exp, handle, *map); FSAL_IS_ERROR(st))
            return st;
        const std::vector<std::uint32_t> stale_before = shared_stale_marks(exp, *map);
        const fleet::DsStatus st = exp.proxy().truncate(handle.key, *map, size);
        if (st.ok())
            return after_shared_write(exp, handle, *map, stale_before);
        LogWarn(COMPONENT_FSAL, "%s: SETATTR size = %" PRIu64 " of fileid %" PRIu64 ": %s",
                exp.label().c_str(), size, handle.fileid, st.message.c_str());
        return to_fsal_status(st);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: SETATTR size of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

} // namespace flexfiles::mds
