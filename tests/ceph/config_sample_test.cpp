// SPDX-License-Identifier: LGPL-3.0-or-later
//
// config_samples/flexfiles-mds-cephfs.conf serves as written: two MDSs run it, with only
// the example addresses, paths and node ids replaced (and the build tree's plugins), on a
// single-node Ceph and 3 NFSv3 data servers; a file written through one is read through
// the other.
#include "ceph_support.hpp"
#include "client/flex_file.hpp"
#include "client/pnfs_client.hpp"

#include <fstream>
#include <sstream>

using namespace flexfiles::ceph_test;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;

namespace {

const fs::path kSample =
    fs::path(__FILE__).parent_path() / "../../config_samples/flexfiles-mds-cephfs.conf";

// Replaces every occurrence of `from`; fails the test if there is none.
void replace(std::string& text, const std::string& from, const std::string& to) {
    std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << "the sample no longer contains \"" << from << "\"";
    while (at != std::string::npos) {
        text.replace(at, from.size(), to);
        at = text.find(from, at + to.size());
    }
}

} // namespace

TEST(CephConfigSample, TwoMdssRunningTheSampleServeOneNamespace) {
    CephCluster ceph;
    ceph.add_grace_members({"mds1", "mds2"});
    ClusterOptions co;
    co.start_mds = false;
    Cluster cluster(co);

    std::ifstream in(kSample);
    std::stringstream buf;
    buf << in.rdbuf();
    std::vector<std::unique_ptr<GaneshaServer>> mds;
    for (unsigned n = 1; n <= 2; n++) {
        const std::string name = "mds" + std::to_string(n);
        const fs::path dir = flexfiles::harness::test_work_dir() / name;
        std::string text = buf.str();
        replace(text, "192.0.2.21", cluster.addresses().address(n));
        for (unsigned i = 0; i < 3; i++)
            replace(text,
                    "Address = 192.0.2.1" + std::to_string(i + 1) + "; Export_Path = /srv/ds;",
                    "Address = " + cluster.ds_info()[i].address +
                        "; Export_Path = " + cluster.ds_info()[i].export_path.string() + ";");
        replace(text, "/etc/ceph/ceph.conf", ceph.conf().string());
        replace(text, "Nodeid = \"mds1\"", "Nodeid = \"" + name + "\"");
        replace(text, "# Layout_Store = /var/lib/nfs/ganesha/flexfiles/export-1.db;",
                "Layout_Store = " + (dir / "export-1.db").string() + ";");
        replace(text, "NFS_CORE_PARAM {",
                "NFS_CORE_PARAM {\n    Plugins_Dir = \"" +
                    flexfiles::harness::plugins_dir().string() + "\";");
        replace(text, "    Lease_Lifetime = 60;",
                "    Lease_Lifetime = 5;\n    Grace_Period = 5;\n    RecoveryRoot = \"" +
                    (dir / "recovery").string() + "\";");

        ServerOptions o = ServerOptions::metadata_server(name, cluster.addresses().address(n), 1);
        o.exports[0].path = "/";
        o.exports[0].local_path = false;
        o.config_text = text;
        o.env["LD_LIBRARY_PATH"] = (flexfiles::harness::ganesha_build_dir() / "SAL").string();
        const std::size_t before = mds.empty() ? 0 : mds.front()->log_offset();
        mds.push_back(std::make_unique<GaneshaServer>(o, dir));
        CephCluster::wait_out_grace(*mds.back());
        if (n == 2)
            CephCluster::wait_out_grace(*mds.front(), before);
    }

    const std::vector<char> data = bytes(64 * 1024, 4);
    SessionOptions so;
    so.host = mds[0]->address();
    so.port = mds[0]->nfs_port();
    so.minor_version = 2;
    auto one = Session::open(so);
    {
        fc::PnfsClient pnfs(*one);
        fc::FlexOpenOptions create;
        create.create = true;
        auto f = fc::FlexFile::open(pnfs, "/ff/from-the-sample", create);
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
        f->write(0, data);
        ASSERT_TRUE(f->commit().ok());
        f->layoutcommit();
        f->layoutreturn(false);
        f->close();
    }
    so.host = mds[1]->address();
    auto two = Session::open(so);
    fc::PnfsClient pnfs(*two);
    auto f = fc::FlexFile::open(pnfs, "/ff/from-the-sample", {});
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(f->read_all(0), data);
    EXPECT_EQ(f->read_all(1), data) << "Mirrors = 2";
    f->layoutreturn(false);
    f->close();
}
