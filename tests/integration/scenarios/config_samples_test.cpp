// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The config samples users start from must work as shipped: each is started with
// ganesha.nfsd with only its example addresses and paths replaced, three data servers
// from config_samples/nfsv3-data-server.conf and a metadata server from
// config_samples/flexfiles-mds.conf, then one from flexfiles-mds-failover.conf (a member of
// an active/passive pair), and a client creates, writes and reads a file through each.
#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

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

    // Each metadata-server sample in turn, on the same data servers: the single MDS and a
    // member of an active/passive pair (its shared storage under one folder).
    struct MdsSample {
        const char* file;
        std::vector<std::pair<std::string, std::string>> paths; // example -> test folder
        const char* namespace_dir;                              // the export's, in the test's
    };
    const std::vector<MdsSample> samples{
        {"flexfiles-mds.conf",
         {{"/srv/flexfiles/namespace", "namespace"}, {"/var/lib/nfs/ganesha", "state"}},
         "namespace"},
        {"flexfiles-mds-failover.conf", {{"/srv/flexfiles", "shared"}}, "shared/namespace"},
    };
    int files = 0;
    for (const MdsSample& sample : samples) {
        SCOPED_TRACE(sample.file);
        const fs::path mds_dir = work / ("mds-" + std::to_string(files + 1));
        std::string text = read_file(kSamples / sample.file);
        ASSERT_FALSE(text.empty()) << "missing sample " << sample.file;
        replace(text, "192.0.2.10", block.address(1));
        for (unsigned i = 0; i < 3; ++i) {
            replace(text, "192.0.2.1" + std::to_string(i + 1), block.address(11 + i));
            replace(text, "Export_Path = /srv/ds;", "Export_Path = " + ds_exports[i].string() + ";",
                    true);
        }
        for (const auto& [example, folder] : sample.paths) {
            replace(text, example, (mds_dir / folder).string());
            fs::create_directories(mds_dir / folder);
        }
        use_build_plugins(text);
        const fs::path ns = mds_dir / sample.namespace_dir;
        fs::create_directories(ns);

        ServerOptions o = ServerOptions::metadata_server("mds", block.address(1), 1);
        o.exports[0].path = ns;
        o.protocols = {4};
        o.config_text = text;
        auto mds = std::make_unique<GaneshaServer>(o, mds_dir);
        EXPECT_TRUE(mds->log_contains("FLEXFILES export 1 (/ff)"));

        fc::SessionOptions so;
        so.host = mds->address();
        so.port = mds->nfs_port();
        auto session = fc::Session::open(so);
        const std::string content = "written through the sample configuration\n";
        fc::OpenFile f = fc::open_path(*session, "/ff/sample.txt",
                                       {.access = OPEN4_SHARE_ACCESS_BOTH, .create = true});
        fc::write_all(*session, f, 0, std::span(content.data(), content.size()));
        const std::vector<char> back = fc::read_all(*session, f);
        fc::close_file(*session, f);
        session->close();
        EXPECT_EQ(std::string(back.begin(), back.end()), content);
        files++;

        // Its bytes are on two of the data servers (Mirrors = 2).
        int holders = 0;
        for (const auto& dir : ds_exports)
            for (const auto& entry : fs::directory_iterator(dir))
                holders += entry.path().filename().string().starts_with("ff-") ? 1 : 0;
        EXPECT_EQ(holders, 2 * files);
        EXPECT_TRUE(mds->error_lines().empty()) << "the metadata server logged errors";
    }

    for (const auto& ds : data_servers)
        EXPECT_TRUE(ds->error_lines().empty()) << ds->name() << " logged errors";
}
