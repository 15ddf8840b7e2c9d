// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The loopback demo: what a flex-files deployment is made of, in a few seconds.
// Starts three NFSv3 data servers and a FLEXFILES metadata server on 127.x addresses,
// opens an NFSv4.2 session to the MDS, writes to a data server the way a pNFS client
// does, shows the post-operation attributes a LAYOUT_WCC would carry, and stops
// everything it started.
#include "ff_harness/harness.hpp"

#include "client/compound.hpp"
#include "client/session.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
using Clock = std::chrono::steady_clock;

namespace {

void step(const std::string& what) { std::cout << "\n== " << what << "\n"; }

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int run() {
    const auto t0 = Clock::now();
    step("Starting 3 NFSv3 data servers and the FLEXFILES metadata server (Mirrors = 2)");
    ClusterOptions options;
    options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        mds.exports[0].pseudo = "/ff";
        mds.exports[0].fsal = flexfiles_fsal_block(ds, {.mirrors = 2});
    };
    Cluster cluster(options);
    for (const auto& ds : cluster.ds_info())
        std::cout << "  data server " << ds.name << "  " << ds.address << ":" << ds.nfs_port
                  << "  export " << ds.export_path.string() << "\n";
    std::cout << "  metadata server " << cluster.mds().address() << ":"
              << cluster.mds().nfs_port() << "  pid " << cluster.mds().pid() << "  (NFSv4.1/4.2)\n";
    std::cout << "  up in " << static_cast<int>(ms_since(t0)) << " ms\n";

    step("NFSv4.2 session to the metadata server");
    fc::SessionOptions so;
    so.host = cluster.mds().address();
    so.port = cluster.mds().nfs_port();
    so.minor_version = 2;
    auto session = fc::Session::open(so);
    std::cout << "  session " << session->id_hex() << (session->has_back_channel() ? " (with back channel)" : "")
              << "\n";
    fc::Compound c;
    c.walk("/ff").getattr({FATTR4_TYPE, FATTR4_MODE, FATTR4_FILEID, FATTR4_FS_LAYOUT_TYPES});
    fc::CompoundResult r = session->send(c);
    r.check("GETATTR /ff");
    const fc::Fattr attrs = r.attrs(c.size() - 1);
    std::cout << "  PUTROOTFH | LOOKUP ff | GETATTR -> type " << attrs.type.value_or(0) << ", fileid "
              << attrs.fileid.value_or(0) << ", mode " << std::oct << attrs.mode.value_or(0) << std::dec
              << "\n";

    step("A client's NFSv3 WRITE to data server ds1, as a flex-files client does");
    Nfs3Client ds(cluster.ds(0).nfs3_url());
    const auto created = ds.create(ds.root(), "demo-file", 0640);
    if (created.status != Nfs3Status::Ok || !created.fh)
        throw std::runtime_error("CREATE on ds1 failed");
    std::vector<std::uint8_t> data(64 * 1024, 'x');
    const auto written = ds.write(*created.fh, 0, data, Nfs3Stable::FileSync);
    if (written.status != Nfs3Status::Ok || !written.file_wcc.after)
        throw std::runtime_error("WRITE on ds1 failed");
    const Nfs3Attr& post = *written.file_wcc.after;
    std::cout << "  WRITE 65536 bytes -> post-op attributes in the reply (what LAYOUT_WCC carries):\n"
              << "    size " << post.size << ", used " << post.used << ", mode " << std::oct
              << (post.mode & 07777) << std::dec << ", uid " << post.uid << ", gid " << post.gid
              << ", mtime " << post.mtime.seconds << "." << post.mtime.nseconds << ", ctime "
              << post.ctime.seconds << "." << post.ctime.nseconds << "\n";
    ds.remove(ds.root(), "demo-file");

    step("Stopping everything");
    session->close();
    session.reset();
    return 0;
}

} // namespace

int main() {
    // The demo's servers live under the build tree unless told otherwise.
    if (std::getenv("FF_TEST_WORK_ROOT") == nullptr)
        setenv("FF_TEST_WORK_ROOT", FF_DEMO_WORK_ROOT, 1);
    try {
        const int rc = run();
        std::cout << "  all servers stopped; logs under " << FF_DEMO_WORK_ROOT << "\n";
        return rc;
    } catch (const std::exception& e) {
        std::cerr << "demo failed: " << e.what() << "\n";
        return 1;
    }
}
