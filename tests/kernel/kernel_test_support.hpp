// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the kernel-client scenarios share: the cluster (1 MDS + 3 NFSv3 data servers,
// FLEXFILES with Mirrors = 2, the MDS also serving NFSv3 and NFSv4.0 for clients without
// layouts), the guest's mount commands, and readers of what the guest's kernel counts
// (/proc/self/mountstats, /proc/net/rpc/nfs).
#pragma once

#include "ff_kernel_client/guest_vm.hpp"
#include "ff_kernel_client/mount_stats.hpp"
#include "mds_test_support.hpp"

#include <cstring>
#include <map>
#include <sstream>
#include <sys/stat.h>

namespace kernel_test {

using namespace mds_test;
using flexfiles::kernel_client::guest_nfs3_calls;
using flexfiles::kernel_client::GuestOptions;
using flexfiles::kernel_client::GuestVm;
using flexfiles::kernel_client::kNfs3Commit;
using flexfiles::kernel_client::kNfs3Read;
using flexfiles::kernel_client::kNfs3Write;
using flexfiles::kernel_client::mount_op_counts;
using flexfiles::kernel_client::mount_stats_block;

inline ClusterOptions kernel_cluster(MdsSettings s = {}) {
    ClusterOptions o;
    o.data_servers = 3;
    o.configure_mds = [s](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        configure_flexfiles_mds(mds, ds, s);
        mds.minor_versions = {0, 1, 2};
    };
    return o;
}

// "mkdir -p DIR && mount ..." for the MDS's export over NFSv4.<minor>.
inline std::string mount_v4(GaneshaServer& mds, const std::string& dir, unsigned minor = 2) {
    const auto& e = mds.options().exports.at(0);
    const std::string pseudo =
        e.pseudo.empty() ? "/export" + std::to_string(e.export_id) : e.pseudo;
    return "mkdir -p " + dir + " && mount -t nfs4 -o vers=4." + std::to_string(minor) +
           ",addr=" + mds.address() +
           ",clientaddr=10.0.2.15,port=" + std::to_string(mds.nfs_port()) + " " + mds.address() +
           ":" + pseudo + " " + dir;
}

// The same export over NFSv3 (the kernel speaks MOUNT itself: fixed ports, no rpcbind).
inline std::string mount_v3(GaneshaServer& mds, const std::string& dir) {
    return "mkdir -p " + dir +
           " && mount -t nfs -o vers=3,proto=tcp,nolock,port=" + std::to_string(mds.nfs_port()) +
           ",mountport=" + std::to_string(mds.mnt_port()) +
           ",mountproto=tcp,addr=" + mds.address() + " " + mds.address() + ":" +
           mds.export_path().string() + " " + dir;
}

// The fileid the MDS gives a file: the inode number of the file in its export folder.
inline std::uint64_t mds_fileid(GaneshaServer& mds, const std::string& name) {
    struct stat st {};
    if (::stat((mds.export_path() / name).c_str(), &st) != 0)
        return 0;
    return st.st_ino;
}

// A figure a scenario measured: printed, and kept in <test work dir>/observations.txt so a
// passing run (whose output ctest does not show) still leaves it behind.
//   observe(Observation() << "write took " << seconds << " s");
struct Observation {
    std::ostringstream text;
    template <class T> Observation& operator<<(const T& value) {
        text << value;
        return *this;
    }
};
inline void observe(const Observation& o) {
    std::string line = o.text.str();
    while (!line.empty() && line.back() == '\n')
        line.pop_back();
    std::cout << "[ observed ] " << line << std::endl;
    std::ofstream(test_work_dir() / "observations.txt", std::ios::app) << line << '\n';
}

// md5sum's hex digest of a host file ("" if it cannot be read).
inline std::string md5_file(const fs::path& path) {
    FILE* p = popen(("md5sum '" + path.string() + "' 2>/dev/null").c_str(), "r");
    char buf[64] = {};
    const bool got = p && fgets(buf, sizeof(buf), p) && std::strlen(buf) >= 32;
    if (p)
        pclose(p);
    return got ? std::string(buf, 32) : std::string();
}

} // namespace kernel_test
