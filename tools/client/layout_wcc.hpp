// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (NFSv4.2 op 77, RFC 9766): the client reports the data files' attributes,
// as its NFSv3 I/O replies gave them, to the MDS.
//
// The wire types and their XDR are not defined here: they come from
// protocols/include/nfs4_layout_wcc_xdr.h (LAYOUT_WCC4args, ff_layout_wcc4, ...), which
// this library calls through its C layer (ganesha_xdr.c). These are the C++ views of the
// flex-files body (section 3.7); Compound::layout_wcc() adds the op itself.
#pragma once

#include "attrs.hpp"
#include "compound.hpp"
#include "nfs4_xdr.hpp"

#include <array>
#include <vector>

namespace flexfiles::client {

// One data file: the triple that names it (all three are required) and its attributes.
struct DataServerWcc {
    std::array<char, NFS4_DEVICEID4_SIZE> deviceid{};
    stateid4 stateid{};                  // the ffds_stateid the layout gave
    std::vector<FileHandle> fh_versions; // the layout's ffds_fh_vers (usually one)
    Fattr attrs; // RFC 9766 Table 1: size, space_used, mode, owner, owner_group, times
};

struct MirrorWcc {
    std::vector<DataServerWcc> data_servers;
};

struct FlexLayoutWcc {
    std::vector<MirrorWcc> mirrors;
};

// The lowa_body of a LAYOUT4_FLEX_FILES LAYOUT_WCC. Throws XdrError if a bound of
// nfs4_layout_wcc_xdr.h is exceeded (mirrors, data servers, filehandles, body size).
std::vector<char> encode_flex_layout_wcc(const FlexLayoutWcc& body);

// The Table 1 attributes (RFC 9766 section 3.4.2) as a mask.
AttrMask layout_wcc_table1_attrs();

} // namespace flexfiles::client
