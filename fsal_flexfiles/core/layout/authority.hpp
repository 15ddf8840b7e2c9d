// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What a layout authorises, decided when it is granted (pnfs/authority.cpp applies it).
// Pure C++ (no Ganesha header): unit-tested alone.
//
// An RW layout is authority to write the data files directly and to tell the MDS the
// file's size and mtime (LAYOUTCOMMIT, LAYOUT_WCC). So it goes only to a client that may
// write the file: one holding an open (or a delegation) with write access to it, on an
// export writable for it, passing the same permission check as a WRITE. A READ layout is
// authority to read the data files only, and the data servers enforce that: its
// credentials are another uid than the data file's owner with the data file's group, and
// data files are mode 0640 (model/data_files.hpp), so they read and cannot write.
#pragma once

#include "layout/grants.hpp"
#include "model/data_files.hpp"

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace flexfiles::layout {

// The AUTH_SYS identity a layout hands out for one data file (ffds_user, ffds_group).
struct DsCredentials {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    bool operator==(const DsCredentials&) const = default;
};

// RW: the data file's owner and group (its synthetic fencing ids). READ: `read_uid`
// (config::read_layout_uid, never an owner) and the data file's group.
DsCredentials layout_credentials(const mds::DataFile& file, Iomode iomode,
                                 std::uint32_t read_uid) noexcept;

// Why an RW layout was refused, in the order the checks run (each one counted).
enum class RwRefusal : std::uint8_t {
    none,
    export_read_only, // the export does not let this client write (Access_Type)
    no_write_open,    // the client holds no open or delegation with write access
    no_permission,    // the file's permissions do not let the caller write
};

// The first check that fails; `may_write` (the permission check, which costs an attribute
// fetch) runs only when the others pass.
template <class PermissionCheck>
RwRefusal rw_refusal(bool export_writable, bool write_open, PermissionCheck&& may_write) {
    if (!export_writable)
        return RwRefusal::export_read_only;
    if (!write_open)
        return RwRefusal::no_write_open;
    if (!may_write())
        return RwRefusal::no_permission;
    return RwRefusal::none;
}

// The opens and delegations of one export's files, per client, as the FSAL saw them
// (open2, reopen2, lease_op2; gone at close2 or free_state). Ganesha does not hand
// LAYOUTGET's stateid to the FSAL, and a LAYOUTGET on a layout stateid names no open at
// all; what counts is whether the client holds some open or delegation with write access
// to the file (layouts are per client and file, as Ganesha keeps them). Keys are the
// states' addresses, never dereferenced. Thread-safe.
class OpenRegistry {
public:
    // The state `key` (an open or a delegation) of `client` on `file` now has (write) or
    // has not write access. A state seen again (an open upgrade or downgrade) is updated.
    void set(const void* key, std::uint64_t file, std::uint64_t client, bool write);
    // The state is closed or freed; nothing when it was not recorded.
    void forget(const void* key);
    // Whether `client` holds a state with write access to `file`.
    bool client_may_write(std::uint64_t file, std::uint64_t client) const;
    std::size_t size() const;

private:
    struct Entry {
        std::uint64_t file = 0;
        std::uint64_t client = 0;
        bool write = false;
    };
    mutable std::mutex mu_;
    std::unordered_map<const void*, Entry> by_state_;
    std::unordered_map<std::uint64_t, std::vector<const void*>> by_file_;
};

} // namespace flexfiles::layout
