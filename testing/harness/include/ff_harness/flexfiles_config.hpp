// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The FSAL block of a FLEXFILES metadata-server export over the cluster's data servers:
// one config text for every test that makes the MDS a flex-files MDS.
//
//   ClusterOptions o;
//   o.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
//       mds.exports[0].fsal = flexfiles_fsal_block(ds, {.mirrors = 2});
//   };
#pragma once

#include "ff_harness/cluster.hpp"

#include <optional>
#include <string>
#include <vector>

namespace flexfiles::harness {

struct FlexfilesOptions {
    unsigned mirrors = 1;
    // Extra lines inside the FLEXFILES block (Trust_WCC, WCC_Max_Age, Layout_Store, ...).
    std::string extra;
    // Extra lines inside every Data_Server block (Rsize, Wsize, ...).
    std::string data_server_extra;
    // Which data servers to list (indexes into the cluster's); empty: all of them.
    std::vector<unsigned> only;
    // The export's Attr_Expiration_Time, written before the FSAL block. 0 by default here:
    // MDCACHE asks the FSAL on every GETATTR, so the tests see the FSAL's freshness rules
    // exactly. nullopt leaves Ganesha's default (60 s), what the README recommends for
    // deployments (FLEXFILES lowers it to WCC_Max_Age per regular file).
    std::optional<int> attr_expiration_time = 0;
    // The namespace's FSAL block, inside the FLEXFILES block (CephCluster::fsal_block() for
    // a CephFS namespace).
    std::string sub_fsal = "FSAL { Name = VFS; }";
};

// [Attr_Expiration_Time = 0;] FSAL { Name = FLEXFILES; FSAL { Name = VFS; } Mirrors = ...;
// Data_Server {...} ... }: the text of ExportSpec::fsal for a FLEXFILES export.
// Data server i gets Id = i + 1.
std::string flexfiles_fsal_block(const std::vector<DataServerInfo>& ds,
                                 const FlexfilesOptions& options = {});

} // namespace flexfiles::harness
