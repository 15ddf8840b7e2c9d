// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Where a file's bytes live: the data files of one MDS file, one per mirror.
//
// This is the model every part of the FSAL shares: placement creates it, the layout store
// persists it, LAYOUTGET encodes it as ff_layout4, LAYOUT_WCC matches reports against it,
// the fallback GETATTRs it, the proxy I/O path reads and writes through it.
//
// Flex-files layouts here are loosely coupled (RFC 8435 section 2.2: NFSv3 data servers,
// no control protocol), so every ffds_stateid handed out is the anonymous stateid; the
// (deviceid, stateid, filehandle) triple that RFC 9766 section 3.7 uses to name a data file
// is unique within a layout because each data file has its own filehandle.
#pragma once

#include "model/deviceid.hpp"
#include "model/nfs3.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace flexfiles::mds {

// The mode of every data file (set at create, and again by every fence, owner repair and
// resilver): the owner, the RW layouts' synthetic uid, reads and writes; the group, the
// synthetic gid that RW and READ layouts share, reads only; nobody else has access. So a
// READ layout's credentials (another uid, the same gid: layout/authority.hpp) read and
// cannot write, and a fenced layout (an old uid and gid) can do neither. Execute bits mean
// nothing to a data file. Data files have had this mode since the first release, so no
// existing data file needs a change for READ layouts to work.
inline constexpr std::uint32_t kDataFileMode = 0640;
// A stale mirror's data file while several MDSs share the namespace: READ layouts another
// MDS granted before the mark (they read through the group bits) can no longer read it;
// its owner's RW layouts, and the MDSs (root), still write it. The resilverer sets it,
// and kDataFileMode again once the mirror is in sync.
inline constexpr std::uint32_t kStaleDataFileMode = 0600;

// One data file: one mirror's copy of the file's bytes on one data server.
struct DataFile {
    std::uint32_t mirror = 0;      // index of the mirror in the layout (0..Mirrors-1)
    std::uint64_t ds_id = 0;       // the Data_Server block's Id
    fleet::DeviceId deviceid{};    // ffds_deviceid in layouts (stable: derived from ds_id)
    nfs3::Fh fh;                   // the NFSv3 filehandle on the data server
    std::string name;              // its name in the data server's export root
    std::uint32_t fencing_uid = 0; // the data file's owner on the data server: RW layouts'
    std::uint32_t fencing_gid = 0; // ffds_user and ffds_group; READ layouts' ffds_group

    bool operator==(const DataFile&) const = default;
};

// The data files of one MDS file, ordered by mirror (stripe count 1: each mirror is one
// data file holding the whole file).
struct DataFileMap {
    std::uint64_t file_id = 0;     // the MDS file's fileid in the namespace FSAL
    std::uint64_t stripe_unit = 0; // ffl_stripe_unit
    std::vector<DataFile> files;

    bool operator==(const DataFileMap&) const = default;
};

} // namespace flexfiles::mds
