// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The config samples users start from must work as shipped: each is started with
// ganesha.nfsd with only its example addresses and paths replaced, three data servers
// from config_samples/nfsv3-data-server.conf and the metadata server from
// config_samples/flexfiles-mds.conf, and a client then creates, writes and reads a file.
#include "ff_harness/harness.hpp"

#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;

namespace {

const fs::path kSamples = fs::path(__FILE__).parent_path() / "../../../config_samples";

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Replaces every occurrence (or only the first, `once`) of `from`; fails the test if absent.
void replace(std::string& text, const std::string& from, const std::string& to, bool once = false) {
    std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << "the sample no longer contains \"" << from << "\"";
    while (at != std::string::npos) {
        text.replace(at, from.size(), to);
        if (once)
            return;
        at = text.find(from, at + to.size());
    }
}

// Test servers load FSALs from the build tree, not from the installed location.
void use_build_plugins(std::string& text) {
    replace(text, "NFS_CORE_PARAM {",
            "NFS_CORE_PARAM {\n    Plugins_Dir = \"" + plugins_dir().string() + "\";", true);
}

} // namespace

TEST(ConfigSamples, DataServerAndMetadataServerSamplesServe) {
    const AddressBlock block = AddressBlock::acquire();
    const fs::path work = test_work_dir();

    std::vector<std::unique_ptr<GaneshaServer>> data_servers;
    std::vector<fs::path> ds_exports;
    for (unsigned i = 0; i < 3; ++i) {
        const std::string name = "ds" + std::to_string(i + 1);
        const fs::path dir = work / name;
        ds_exports.push_back(dir / "srv-ds");

        std::string text = read_file(kSamples / "nfsv3-data-server.conf");
        ASSERT_FALSE(text.empty()) << "missing sample in " << kSamples;
        replace(text, "192.0.2.11", block.address(11 + i));
        replace(text, "/srv/ds", ds_exports.back().string());
        replace(text, "/var/lib/nfs/ganesha/recovery", (dir / "recovery").string());
        replace(text, "Export_Id = 11;", "Export_Id = " + std::to_string(11 + i) + ";");
        use_build_plugins(text);

        ServerOptions o = ServerOptions::data_server(name, block.address(11 + i),
                                                     static_cast<std::uint16_t>(11 + i));
        o.exports[0].path = ds_exports.back();
        o.config_text = text;
        data_servers.push_back(std::make_unique<GaneshaServer>(o, dir));
    }

    const fs::path mds_dir = work / "mds";
    std::string text = read_file(kSamples / "flexfiles-mds.conf");
    replace(text, "192.0.2.10", block.address(1));
    for (unsigned i = 0; i < 3; ++i) {
        replace(text, "192.0.2.1" + std::to_string(i + 1), block.address(11 + i));
        replace(text, "Export_Path = /srv/ds;", "Export_Path = " + ds_exports[i].string() + ";",
                true);
    }
    replace(text, "/srv/flexfiles/namespace", (mds_dir / "namespace").string());
    replace(text, "/var/lib/nfs/ganesha", (mds_dir / "state").string());
    use_build_plugins(text);
    fs::create_directories(mds_dir / "state" / "flexfiles");

    ServerOptions o = ServerOptions::metadata_server("mds", block.address(1), 1);
    o.exports[0].path = mds_dir / "namespace";
    o.protocols = {4};
    o.config_text = text;
    GaneshaServer mds(o, mds_dir);
    EXPECT_TRUE(mds.log_contains("FLEXFILES export 1 (/ff)"));

    fc::SessionOptions so;
    so.host = mds.address();
    so.port = mds.nfs_port();
    auto session = fc::Session::open(so);
    const std::string content = "written through the sample configuration\n";
    fc::OpenFile f = fc::open_path(*session, "/ff/sample.txt",
                                   {.access = OPEN4_SHARE_ACCESS_BOTH, .create = true});
    fc::write_all(*session, f, 0, std::span(content.data(), content.size()));
    const std::vector<char> back = fc::read_all(*session, f);
    fc::close_file(*session, f);
    EXPECT_EQ(std::string(back.begin(), back.end()), content);

    // Its bytes are on two of the data servers (Mirrors = 2).
    int holders = 0;
    for (const auto& dir : ds_exports)
        for (const auto& entry : fs::directory_iterator(dir))
            holders += entry.path().filename().string().starts_with("ff-") ? 1 : 0;
    EXPECT_EQ(holders, 2);

    for (auto* server : {&mds, data_servers[0].get(), data_servers[1].get(), data_servers[2].get()})
        EXPECT_TRUE(server->error_lines().empty()) << server->name() << " logged errors";
}
